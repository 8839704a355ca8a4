import Foundation
import Testing
import TileMath
@testable import Canvas
import Features
@testable import Rendering

/// A dense feature tile (the bench's kind: small polygons filled at 0.6 and outlined, and
/// 10-point random walks that cross themselves) drawn by the canvas's own rasterizer stays
/// as close to the true coverage as cairo's: the truth is the tile drawn by cairo at 8x and
/// averaged down, premultiplied.
@Suite struct FeatureTileQualityTests {
    static func features(around tile: TileID, count: Int = 600) -> [Feature] {
        let box = tile.bounds
        var rng = SeededRandom(seed: 7)
        func next(_ low: Double, _ high: Double) -> Double { low + (high - low) * rng.nextUnit() }
        var features = [Feature]()
        for _ in 0..<count {
            let lon = next(box.west, box.east), lat = next(box.south, box.north)
            let r = next(0.0003, 0.0012), sides = Int(next(4, 9.99))
            let ring = (0...sides).map { k in
                Coordinate(latitude: lat + 0.76 * r * sin(2 * .pi * Double(k % sides) / Double(sides)),
                           longitude: lon + r * cos(2 * .pi * Double(k % sides) / Double(sides)))
            }
            var polygon = Feature(geometry: .polygon([ring]))
            polygon.style.fill = Color(hex: "#7fa65a")
            polygon.style.fillOpacity = 0.6
            polygon.style.stroke = Color(hex: "#4a3520")
            polygon.style.strokeWidth = 1.5
            var walk = [Coordinate(latitude: next(box.south, box.north), longitude: next(box.west, box.east))]
            for _ in 0..<9 { walk.append(Coordinate(latitude: walk.last!.latitude + next(-0.0006, 0.0006), longitude: walk.last!.longitude + next(-0.0008, 0.0008))) }
            var line = Feature(geometry: .lineString(walk))
            line.style.stroke = Color(hex: "#1f5fbf")
            line.style.strokeWidth = 2
            features += [polygon, line]
        }
        return features
    }

    @Test func denseTileIsAsCloseToTheTruthAsCairos() throws {
        let tile = TileID(z: 15, x: 9649, y: 12312)
        let features = Self.features(around: tile)
        let factor = 8
        func render(scale: Int, cairoOnly: Bool) throws -> RGBAImage {
            let canvas = try Canvas(width: 256 * scale, height: 256 * scale)
            canvas.drawsWithCairoOnly = cairoOnly
            FeatureRenderer().drawShapes(features, on: canvas, projection: MapProjection(tile: tile, tileSize: 256, scale: Double(scale)))
            return canvas.makeImage()
        }
        let direct = try render(scale: 1, cairoOnly: false), cairo = try render(scale: 1, cairoOnly: true)
        let fine = try render(scale: factor, cairoOnly: true)
        var truth = [Double](repeating: 0, count: 256 * 256 * 4)
        fine.pixels.withUnsafeBufferPointer { pixels in
            for y in 0..<(256 * factor) {
                for x in 0..<(256 * factor) {
                    let o = (y * 256 * factor + x) * 4, t = ((y / factor) * 256 + x / factor) * 4, alpha = Double(pixels[o + 3]) / 255
                    for c in 0..<3 { truth[t + c] += Double(pixels[o + c]) * alpha }
                    truth[t + 3] += Double(pixels[o + 3])
                }
            }
        }
        func rms(_ image: RGBAImage) -> Double {
            var sum = 0.0
            for p in 0..<(256 * 256) {
                let alpha = Double(image.pixels[p * 4 + 3]) / 255
                for c in 0..<4 {
                    let value = c == 3 ? Double(image.pixels[p * 4 + 3]) : Double(image.pixels[p * 4 + c]) * alpha
                    let d = value - truth[p * 4 + c] / Double(factor * factor)
                    sum += d * d
                }
            }
            return (sum / Double(256 * 256 * 4)).squareRoot()
        }
        let ours = rms(direct), theirs = rms(cairo)
        #expect(ours <= theirs * 1.15, "RMS against the truth \(ours), cairo's \(theirs)")
        #expect(ours > 0.1, "a tile of \(features.count) features has antialiased edges")
    }
}
