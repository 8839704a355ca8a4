import Foundation
import Testing
import Canvas
import TileMath
import Features
import TileSources
@testable import Rendering

/// Issue 13's named features of Central Park: every station, point of interest and landmark.
func centralParkNamed(filePath: String = #filePath) throws -> [Feature] {
    try GeoJSON.load(URL(fileURLWithPath: filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/central-park-named.geojson"))
}

/// Writes an image under the temporary folder (to look at it when a test fails) and returns its path.
func keep(_ image: RGBAImage, _ name: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-\(name).png").path
    if let bytes = try? image.encoded(.png()) { _ = FileManager.default.createFile(atPath: path, contents: Data(bytes)) }
    return path
}

struct ReportedLabel {
    let text: String, kind: String, box: PixelBox
}

/// The labels of a snapshot's geometry report (what `snapshot --geometry` writes).
func reportedLabels(_ snapshot: Snapshot) throws -> (labels: [ReportedLabel], counts: [String: Double]) {
    let object = try #require(try JSONSerialization.jsonObject(with: snapshot.geometryJSON) as? [String: Any])
    let labels = try #require(object["labels"] as? [[String: Any]])
    let counts = try #require(object["labelCounts"] as? [String: Double])
    return (try labels.map { o in
        let x = try #require(o["x"] as? Double), y = try #require(o["y"] as? Double)
        let w = try #require(o["width"] as? Double), h = try #require(o["height"] as? Double)
        return ReportedLabel(text: try #require(o["text"] as? String), kind: try #require(o["kind"] as? String),
                             box: PixelBox(minX: x, minY: y, maxX: x + w, maxY: y + h))
    }, counts)
}

@Suite struct LabelPlacementTests {
    static let park = Coordinate(latitude: 40.7812, longitude: -73.9665)

    /// Zoom 14, the whole park: many stations close together along the avenues. Labels
    /// that do not fit are dropped, and those drawn never overlap each other or an icon.
    @Test func aDenseSnapshotHasNoOverlappingLabels() async throws {
        let features = try centralParkNamed()
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Self.park, zoom: 14), width: 700, height: 800, features: features))
        let (labels, counts) = try reportedLabels(snapshot)
        for (i, a) in labels.enumerated() {
            for b in labels[(i + 1)...] where a.box.intersects(b.box) {
                Issue.record("\(a.text) \(a.box) meets \(b.text) \(b.box) (image: \(keep(snapshot.image, "labels-z14")))")
            }
        }
        // No label covers a marker's point.
        for marker in snapshot.markers {
            for label in labels { #expect(!(label.box.grown(by: 5).minX < marker.point.x && marker.point.x < label.box.grown(by: 5).maxX
                                           && label.box.grown(by: 5).minY < marker.point.y && marker.point.y < label.box.grown(by: 5).maxY),
                                          "\(label.text) covers the marker \(marker.title ?? "")") }
        }
        let kinds = Set(labels.map(\.kind))
        #expect(kinds.isSuperset(of: ["poi", "station", "landmark"]), "\(kinds)")
        #expect(labels.contains { $0.text == "Goblin" } && labels.contains { $0.text == "The Reservoir" })
        // Counted: every named feature, those labelled over the whole set, those drawn here.
        #expect(counts["named"] == Double(features.filter { $0.title.flatMap(LabelText.clean) != nil }.count))
        let labelled = try #require(counts["labelled"]), named = try #require(counts["named"])
        #expect(labelled < named, "at zoom 14 some stations' names do not fit")
        #expect(counts["drawn"] == Double(labels.count))
    }

    /// A label dropped where it finds no room comes back at the zooms where it fits.
    @Test func dropsAtOneZoomAndKeepsWhereItFits() {
        let index = LabelIndex(layers: [LabelIndex.Layer(features: (try? centralParkNamed()) ?? [])])
        let low = index.placement(zoom: 13), high = index.placement(zoom: 18)
        #expect(low.labelledFeatures < high.labelledFeatures, "\(low.labelledFeatures) at 13, \(high.labelledFeatures) at 18")
        // At 18 every name is drawn (the Reservoir is named twice, by two features on one spot: once).
        let names = Set(((try? centralParkNamed()) ?? []).compactMap { $0.title.flatMap(LabelText.clean) })
        #expect(Set(high.labels.map(\.text)) == names)
        #expect(high.labelledFeatures == high.namedFeatures - 1)
        // The same object: computed once per zoom.
        #expect(index.placement(zoom: 13).labels == low.labels)
    }

    /// At every zoom of the demo map, @1x and @2x: no two labels meet, and none meets an icon.
    @Test func noLabelCollidesAtAnyZoom() throws {
        let features = try centralParkNamed()
        let index = LabelIndex(layers: [LabelIndex.Layer(features: features)])
        let renderer = FeatureRenderer()
        for scale in [1.0, 2.0] {
            for zoom in 10...20 {
                let placement = index.placement(zoom: Double(zoom), scale: scale)
                let world = 256 * scale * pow(2, Double(zoom))
                let icons = features.flatMap { feature in
                    LabelPlacer.markerPoints(feature).map { c in
                        renderer.iconBox(for: feature).scaled(by: scale).offset(x: MapPoint(c).x * world, y: MapPoint(c).y * world)
                    }
                }
                for (i, a) in placement.labels.enumerated() {
                    for b in placement.labels[(i + 1)...] { #expect(!a.box.intersects(b.box), "z\(zoom) @\(scale)x: \(a.text) meets \(b.text)") }
                    for icon in icons { #expect(!a.box.intersects(icon), "z\(zoom) @\(scale)x: \(a.text) covers an icon") }
                }
            }
        }
    }

    /// Coordinates at a pole, NaN or far beyond the world: nothing placed for them, no trap.
    @Test func hostileCoordinatesPlaceNothing() {
        let bad = [Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: .nan, longitude: 10), Coordinate(latitude: 10, longitude: .infinity)]
        var features = bad.map { Feature(geometry: .point($0), title: "Bad point") }
        features.append(Feature(geometry: .lineString(bad), title: "Bad line"))
        features.append(Feature(geometry: .polygon([bad + [bad[0]]]), title: "Bad area"))
        features.append(Feature(geometry: .point(Self.park), title: "Good"))
        let labels = LabelIndex(layers: [LabelIndex.Layer(features: features)]).placement(zoom: 12).labels
        #expect(labels.map(\.text) == ["Good"])
    }

    /// Points of interest win over stations at the same spot; a layer's own priority wins over both.
    @Test func prioritiesDecideWhoIsDrawn() {
        let spot = Coordinate(latitude: 40.7678, longitude: -73.9718)
        var station = Feature(geometry: .point(spot), title: "A station with a long name")
        station.style.markerSymbol = "subway"
        var poi = Feature(geometry: .point(Coordinate(latitude: spot.latitude, longitude: spot.longitude + 0.00002)), title: "A quest with a long name")
        poi.style.markerSymbol = "star"
        // At zoom 10 the two icons are on one pixel: only one label of the four candidates each fits... or none overlaps.
        let index = LabelIndex(layers: [LabelIndex.Layer(features: [station, poi])])
        let labels = index.placement(zoom: 10).labels
        #expect(labels.first?.text == "A quest with a long name" && labels.first?.kind == .poi)
        let boosted = LabelIndex(layers: [LabelIndex.Layer(features: [poi]), LabelIndex.Layer(features: [station], priority: 100)])
        #expect(boosted.placement(zoom: 10).labels.first?.text == "A station with a long name")
    }

    /// A named line is labelled along its longest segment, rotated to it and upright.
    @Test func pathNamesFollowTheLongestSegment() throws {
        // West to east and down (south): a long diagonal, then a short stub.
        let a = Coordinate(latitude: 40.770, longitude: -73.980), b = Coordinate(latitude: 40.765, longitude: -73.970)
        let c = Coordinate(latitude: 40.7651, longitude: -73.9699)
        let line = Feature(geometry: .lineString([c, b, a]), title: "The Mall")
        let placement = LabelIndex(layers: [LabelIndex.Layer(features: [line])]).placement(zoom: 16)
        let label = try #require(placement.labels.first)
        #expect(label.kind == .path)
        let world = 256 * pow(2, 16.0)
        let pa = PixelPoint(x: MapPoint(a).x * world, y: MapPoint(a).y * world), pb = PixelPoint(x: MapPoint(b).x * world, y: MapPoint(b).y * world)
        #expect(abs(label.angle - atan2(pb.y - pa.y, pb.x - pa.x)) < 1e-9, "west to east, whatever the line's direction")
        #expect(abs(label.center.x - (pa.x + pb.x) / 2) < 1e-6 && abs(label.center.y - (pa.y + pb.y) / 2) < 1e-6)
        // Drawn rotated: the text's ink runs along the segment.
        let snapshot = try Canvas(width: 256, height: 256)
        FeatureRenderer().drawLabels(placement.labels, on: snapshot, projection: MapProjection(zoom: 16, origin: PixelPoint(x: label.center.x - 128, y: label.center.y - 128)))
        let image = snapshot.makeImage()
        let inked = (0..<256).flatMap { y in (0..<256).map { (x: $0, y: y) } }.filter { image[$0.x, $0.y].alpha > 200 && image[$0.x, $0.y].red < 120 }
        #expect(inked.count > 50)
        // Dark ink lies near the line through the centre at the label's angle.
        let far = inked.filter { p in abs(-sin(label.angle) * (Double(p.x) - 128) + cos(label.angle) * (Double(p.y) - 128)) > 12 }
        #expect(far.isEmpty, "\(far.count) dark pixels away from the path (image: \(far.isEmpty ? "" : keep(image, "labels-path")))")
    }

    /// A layer drawn only from zoom 16 takes no room below it: the other layer's label is placed.
    @Test func aLayerOutsideItsZoomsTakesNoRoom() {
        var blocker = Feature(geometry: .point(Self.park), title: "Only from zoom 16, with a long name")
        blocker.style.markerSymbol = "star"
        let station = Feature(geometry: .point(Coordinate(latitude: Self.park.latitude, longitude: Self.park.longitude + 0.00003)), title: "Below it")
        let index = LabelIndex(layers: [LabelIndex.Layer(features: [blocker], minZoom: 16, maxZoom: 18), LabelIndex.Layer(features: [station])])
        #expect(index.placement(zoom: 12).labels.map(\.text) == ["Below it"])
        #expect(index.placement(zoom: 12).labels.first?.center.x ?? 0 > 0)
        #expect(index.placement(zoom: 16).labels.map(\.text).first == "Only from zoom 16, with a long name")
        #expect(index.iconBoxes(zoom: 12).count == 1 && index.iconBoxes(zoom: 16).count == 2)
    }

    /// A street split into ways, each named: written once per stretch, not once per way.
    @Test func aNameSplitIntoManyWaysIsNotRepeatedNearby() {
        let ways = (0..<8).map { i in
            Feature(geometry: .lineString([Coordinate(latitude: 40.77, longitude: -73.98 + Double(i) * 0.002),
                                           Coordinate(latitude: 40.77, longitude: -73.98 + Double(i + 1) * 0.002)]), title: "Central Park South")
        }
        // At zoom 17 a way is ~190 px, the whole street ~1500 px: a few labels, each 256 px or more apart.
        let labels = LabelIndex(layers: [LabelIndex.Layer(features: ways)]).placement(zoom: 17).labels
        #expect((2...5).contains(labels.count), "\(labels.count)")
        for (i, a) in labels.enumerated() {
            for b in labels[(i + 1)...] { #expect(hypot(a.center.x - b.center.x, a.center.y - b.center.y) >= 256) }
        }
    }

    /// Hostile titles: 10,000 characters, control characters, bidi overrides.
    @Test func labelTextIsCleanedAndCut() async throws {
        let long = String(repeating: "Ab", count: 5_000)
        let cut = try #require(LabelText.clean(long))
        #expect(cut.count == LabelText.maxCharacters && cut.hasSuffix("…") && cut.hasPrefix("AbAb"))
        #expect(LabelText.clean("Bethesda\u{0}\u{7}\u{1B}[31m\nFountain\u{202E}\t") == "Bethesda[31m Fountain")
        #expect(LabelText.clean("\u{0}\u{1}\n \t") == nil)
        // One letter with 100,000 combining marks: cut too (to `maxScalars` scalars).
        let zalgo = "Z" + String(repeating: "\u{0301}", count: 100_000)
        #expect((LabelText.clean(zalgo)?.unicodeScalars.count ?? 0) <= LabelText.maxScalars + 1)
        // Through a snapshot of a committed file: the drawn labels are the cut and cleaned text.
        let hostile = try GeoJSON.load(URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/hostile-labels.geojson"))
        #expect(hostile[0].title?.count == 10_000)
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(Self.park, zoom: 16), width: 800, height: 400, features: hostile))
        let labels = try reportedLabels(snapshot).labels
        #expect(labels.map(\.text) == [String(repeating: "x", count: 63) + "…", "Bethesda[31m Fountain"])
    }

    /// Tiles drawn at the same time all see one placement, the same as one thread's.
    @Test func placementIsTheSameFromManyThreads() async throws {
        let index = LabelIndex(layers: [LabelIndex.Layer(features: try centralParkNamed())])
        let reference = LabelIndex(layers: [LabelIndex.Layer(features: try centralParkNamed())]).placement(zoom: 15).labels
        let results = await withTaskGroup(of: [PlacedLabel].self) { group in
            for _ in 0..<8 { group.addTask { index.placement(zoom: 15).labels } }
            return await group.reduce(into: [[PlacedLabel]]()) { $0.append($1) }
        }
        #expect(results.count == 8 && results.allSatisfy { $0 == reference })
    }

    /// Nine tiles stitched are the snapshot of the same area, labels crossing tile edges
    /// included, up to antialiasing.
    @Test(arguments: [15, 16])
    func stitchedTilesEqualASnapshot(zoom: Int) async throws {
        let features = try centralParkNamed()
        let source = FeatureTileSource(name: "park", features: features)
        let middle = TileID(containing: Coordinate(latitude: 40.7655, longitude: -73.9745), zoom: zoom)
        let background = Color(hex: "#f2efe9")!
        let stitched = try Canvas(width: 768, height: 768, background: background)
        for dy in -1...1 {
            for dx in -1...1 {
                let tile = TileID(z: zoom, x: middle.x + dx, y: middle.y + dy)
                if let canvas = try source.draw(TileRequest(tile, scale: 1)) {
                    stitched.draw(canvas.makeImage(), x: Double((dx + 1) * 256), y: Double((dy + 1) * 256), width: 256, height: 256, interpolation: .nearest)
                }
            }
        }
        // The labels that cross an inner tile edge: the test is about them.
        let placement = source.labelIndex.placement(zoom: Double(zoom))
        let crossing = placement.labels.filter { label in
            (0...1).contains { i in
                let edgeX = Double((middle.x + i) * 256), edgeY = Double((middle.y + i) * 256)
                return (label.box.minX < edgeX && edgeX < label.box.maxX && label.box.maxY > Double((middle.y - 1) * 256) && label.box.minY < Double((middle.y + 2) * 256))
                    || (label.box.minY < edgeY && edgeY < label.box.maxY && label.box.maxX > Double((middle.x - 1) * 256) && label.box.minX < Double((middle.x + 2) * 256))
            }
        }
        #expect(!crossing.isEmpty, "no label crosses a tile edge in this block")
        let centre = MapPoint(x: (Double(middle.x) + 0.5) / pow(2, Double(zoom)), y: (Double(middle.y) + 0.5) / pow(2, Double(zoom))).coordinate
        let snapshot = try await Snapshotter.render(SnapshotOptions(region: .center(centre, zoom: Double(zoom)), width: 768, height: 768,
                                                                    background: background, features: features))
        let a = stitched.makeImage(), b = snapshot.image
        var differing = 0, worst = 0
        for y in 0..<768 {
            for x in 0..<768 {
                let p = a[x, y], q = b[x, y]
                let d = max(abs(Int(p.red) - Int(q.red)), abs(Int(p.green) - Int(q.green)), abs(Int(p.blue) - Int(q.blue)))
                worst = max(worst, d)
                if d > 24 { differing += 1 }
            }
        }
        if differing > 20 {  // measured: 0 (the worst pixel 8 levels apart, antialiasing)
            Issue.record("\(differing) pixels differ by more than 24 (worst \(worst)); \(crossing.map(\.text)); images: \(keep(a, "labels-stitched-z\(zoom)")), \(keep(b, "labels-snapshot-z\(zoom)"))")
        }
    }
}
