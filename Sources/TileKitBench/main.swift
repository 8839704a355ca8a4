// tilekit-bench: measurements for `make bench`, printed as JSON lines for scripts/bench.py.
//
//   tilekit-bench codecs IMAGE [--tile-size 256] [--seconds 2]
//
// Cuts IMAGE into tiles and encodes them with each codec setting on one core for at least
// the given time, printing {"codec":..., "tiles_per_second":..., "mean_bytes":...} per line.
import Foundation
import Canvas

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tilekit-bench: \(message)\n".utf8))
    exit(64)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.first == "codecs", arguments.count >= 2 else {
    fail("usage: tilekit-bench codecs IMAGE [--tile-size 256] [--seconds 2]")
}
let imagePath = arguments[1]
func option(_ name: String, _ fallback: Double) -> Double {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count, let value = Double(arguments[index + 1]) else { return fallback }
    return value
}
let tileSize = Int(option("--tile-size", 256))
let seconds = option("--seconds", 2)

let image: RGBAImage
do {
    image = try RGBAImage(contentsOf: URL(fileURLWithPath: imagePath))
} catch {
    fail("\(error)")
}
var tiles = [RGBAImage]()
for y in stride(from: 0, through: image.height - tileSize, by: tileSize) {
    for x in stride(from: 0, through: image.width - tileSize, by: tileSize) {
        tiles.append(image.cropped(x: x, y: y, width: tileSize, height: tileSize))
    }
}
guard !tiles.isEmpty else { fail("\(imagePath) is smaller than one \(tileSize) px tile") }

let settings: [(String, EncodingOptions)] = [
    ("png-level1-nofilter", .png(compressionLevel: 1, filter: .none)),
    ("png-level2-nofilter", .png(compressionLevel: 2, filter: .none)),
    ("png-level6-allfilters", .png(compressionLevel: 6, filter: .all)),
    ("jpeg-q85", .jpeg(quality: 85)),
    ("webp-q80-method0", .webp(quality: 80, lossless: false, method: 0)),
    ("webp-lossless-method0", .webp(quality: 75, lossless: true, method: 0)),
]
let clock = ContinuousClock()
for (name, options) in settings {
    var count = 0, bytes = 0
    let start = clock.now
    var elapsed = Duration.zero
    repeat {
        for tile in tiles {
            bytes += (try? tile.encoded(options).count) ?? 0
            count += 1
        }
        elapsed = clock.now - start
    } while elapsed < .seconds(seconds)
    let secondsTaken = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    print(#"{"codec":"\#(name)","tiles_per_second":\#(Double(count) / secondsTaken),"mean_bytes":\#(bytes / count),"tiles":\#(tiles.count)}"#)
}
