import Foundation
import Testing
import Canvas
import TileMath
import TileSources
import MapProjects
import Rendering

/// A features layer with `"draw": false` draws nothing but takes its room in the map's label
/// placement: tiles pre-rendered from such a map leave room for the live layer over them.
@Suite struct ReservedLabelTests {
    /// A street named along its line and a magenta pin in its middle, both labelled.
    func project(drawPins: Bool) throws -> (folder: URL, map: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-reserved-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(##"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[-73.9840,40.7620],[-73.9780,40.7650],[-73.9720,40.7680],[-73.9660,40.7710],[-73.9600,40.7740]]},"properties":{"title":"Fifth Avenue Promenade","stroke":"#555555"}},{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-73.9660,40.7800],[-73.9620,40.7800],[-73.9620,40.7830],[-73.9660,40.7830],[-73.9660,40.7800]]]},"properties":{"title":"Great Lawn","fill":"#a5c882"}}]}"##.utf8)
            .write(to: folder.appendingPathComponent("names.geojson"))
        try Data(##"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.9720,40.7680]},"properties":{"title":"Goblin","marker-symbol":"monster","marker-color":"#ff00ff"}},{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-73.9650,40.7805],[-73.9630,40.7805],[-73.9630,40.7825],[-73.9650,40.7825],[-73.9650,40.7805]]]},"properties":{"fill":"#ff00ff","fill-opacity":1}}]}"##.utf8)
            .write(to: folder.appendingPathComponent("pins.geojson"))
        let map = folder.appendingPathComponent("map.json")
        try Data(#"""
        {"name": "drawing", "layers": [
          {"id": "paper", "type": "generated", "generator": "parchment"},
          {"id": "names", "type": "features", "files": ["names.geojson"]},
          {"id": "pins", "type": "features", "files": ["pins.geojson"], "draw": \#(drawPins)}]}
        """#.utf8).write(to: map)
        return (folder, map)
    }

    func magentaPixels(_ served: ServedMap, zoom: Int) async throws -> Int {
        let tile = TileID(containing: Coordinate(latitude: 40.7680, longitude: -73.9720), zoom: zoom)
        let data = try #require(try await served.composer.tile(TileRequest(tile)).data)
        let image = try RGBAImage(decoding: data.bytes)
        var count = 0
        for y in 0..<image.height { for x in 0..<image.width {
            let p = image[x, y]
            if p.red > 200 && p.green < 80 && p.blue > 200 { count += 1 }
        } }
        return count
    }

    @Test func aLayerThatDoesNotDrawIsLeftOutOfTheTiles() async throws {
        let drawn = try project(drawPins: true), reserved = try project(drawPins: false)
        defer { try? FileManager.default.removeItem(at: drawn.folder); try? FileManager.default.removeItem(at: reserved.folder) }
        #expect(try await magentaPixels(ServedMap(MapProjectReader.load(drawn.map)), zoom: 16) > 20, "the drawn pin is in the tile")
        let served = try ServedMap(MapProjectReader.load(reserved.map))
        #expect(try await magentaPixels(served, zoom: 16) == 0, "the reserved pin is not")
        #expect(served.layer("pins") == nil, "nor is it a layer of its own (no tiles, no toggle in the viewer)")
    }

    @Test func itsLabelsStillTakeTheirRoom() throws {
        let reserved = try project(drawPins: false)
        defer { try? FileManager.default.removeItem(at: reserved.folder) }
        let placement = try ServedMap(MapProjectReader.load(reserved.map)).labels.placement(zoom: 16)
        let goblin = try #require(placement.labels.first { $0.text == "Goblin" }, "the pin's label is placed")
        let street = try #require(placement.labels.first { $0.text == "Fifth Avenue Promenade" }, "the street keeps a label")
        #expect(!goblin.box.intersects(street.box), "\(goblin.box) \(street.box)")
    }

    @Test func onlyAFeaturesLayerCanLeaveItsDrawing() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tilekit-reserved-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let map = folder.appendingPathComponent("map.json")
        try Data(#"{"name": "m", "layers": [{"id": "paper", "type": "generated", "draw": false}]}"#.utf8).write(to: map)
        do {
            _ = try MapProjectReader.load(map)
            Issue.record("draw: false on a generated layer was accepted")
        } catch {
            let text = error.problems.map { "\($0.place): \($0.reason)" }
            #expect(text.contains { $0.hasPrefix("layers[0].draw: only a features layer") }, "\(text)")
        }
    }

    /// The reserved layer's opaque pond lies on the lawn's label point: drawn over the tiles,
    /// it would hide the lawn's name, so the name keeps off it (it goes at the centre when the
    /// pond is an ordinary layer of the same map, drawn under the labels).
    @Test func otherLabelsKeepOffItsFilledAreas() throws {
        let drawn = try project(drawPins: true), reserved = try project(drawPins: false)
        defer { try? FileManager.default.removeItem(at: drawn.folder); try? FileManager.default.removeItem(at: reserved.folder) }
        let world = 256 * Double(1 << 16)
        let west = MapPoint(Coordinate(latitude: 40.7825, longitude: -73.9650)), east = MapPoint(Coordinate(latitude: 40.7805, longitude: -73.9630))
        let pond = PixelBox(minX: west.x * world, minY: west.y * world, maxX: east.x * world, maxY: east.y * world)
        let together = try ServedMap(MapProjectReader.load(drawn.map)).labels.placement(zoom: 16)
        let lawnOnPond = try #require(together.labels.first { $0.text == "Great Lawn" })
        #expect(lawnOnPond.box.intersects(pond), "the lawn's name is at its centre, on the pond drawn beneath it")
        let apart = try ServedMap(MapProjectReader.load(reserved.map)).labels.placement(zoom: 16)
        let lawn = apart.labels.first { $0.text == "Great Lawn" }
        #expect(lawn.map { !$0.box.intersects(pond) } ?? true, "\(String(describing: lawn)) \(pond)")
    }
}
