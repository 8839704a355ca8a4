import Foundation
import TileMath
import Canvas
import TileSources
import Pyramids

// Image decoders: in memory (tiles from stores and upstreams), and PNG, JPEG and TIFF as
// the pyramid reads a scan, row by row from a file. Each target keeps to inputs with its
// format's signature, so its corpus stays about one decoder.

extension FuzzTarget {
    static let png = imageTarget("png", signatures: [[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]], inMemory: true, asScan: true)
    static let jpeg = imageTarget("jpeg", signatures: [[0xFF, 0xD8]], inMemory: true, asScan: true)
    // The pyramid reads a WebP with the in-memory decoder: nothing more to test as a scan.
    static let webp = imageTarget("webp", signatures: [Array("RIFF".utf8)], inMemory: true, asScan: false)
    static let tiff = imageTarget("tiff", signatures: [[0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A]], inMemory: false, asScan: true)

    static func imageTarget(_ format: String, signatures: [[UInt8]], inMemory: Bool, asScan: Bool) -> FuzzTarget {
        let ways = [inMemory ? "decoded in memory" : nil, asScan ? "read row by row as a pyramid's source" : nil].compactMap { $0 }
        return FuzzTarget(name: format, input: "a \(format.uppercased()) image, \(ways.joined(separator: ", then "))") { bytes in
            guard signatures.contains(where: bytes.starts(with:)) else { return }
            if inMemory, let image = try? RGBAImage(decoding: bytes), image.width * image.height <= 1 << 20 {
                _ = try? image.encoded(.png())  // what decodes must encode again (small ones: the encoder is not under test)
            }
            if asScan, let path = Scratch.shared.write(bytes, to: "image.\(format)") {
                pyramidOfWorld(from: path)
            }
        }
    }

    /// Builds zoom 0 from an image laid over the whole world: every row of the image is read
    /// through the streaming row readers (PNG, JPEG, TIFF) or the whole decoder (WebP).
    ///
    /// On a budget, so that every input takes about as long: an image of at most a million
    /// pixels (a larger one stops at the size check, as a bomb does under `.scan`) cut into
    /// one 32 px tile. The rows are read, checked and warped by the same code as for 256 px
    /// tiles of a large scan; a 256 px tile cost 64 times the warping and encoding and
    /// made these targets 200-500 inputs a second.
    static func pyramidOfWorld(from path: String) {
        guard let reader = try? ImageRowReader(path: path, limits: scanBudget) else { return }
        let (width, height) = (reader.width, reader.height)
        guard let georeference = try? Georeference.bounds(BoundingBox(west: -180, south: -85, east: 180, north: 85), width: width, height: height) else { return }
        buildPyramid(source: path, georeference: georeference, zooms: 0...0, tileSize: 32, imageLimits: scanBudget)
    }

    /// What the image targets read as a scan: a million pixels, 8192 on a side.
    static let scanBudget = ImageLimits(maxSide: 8192, maxPixels: 1 << 20)

    /// Runs a pyramid build into a folder store of the scratch folder (removed after).
    static func buildPyramid(source: String, georeference: Georeference, zooms: ClosedRange<Int>?,
                             tileSize: Int = 256, imageLimits: ImageLimits = .scan) {
        let output = Scratch.shared.path("pyramid")
        waitFor {
            var options = PyramidOptions()
            options.zooms = zooms
            options.concurrency = 1
            options.tileSize = tileSize
            options.imageLimits = imageLimits
            guard let store = try? StagedStore(path: output, format: .png, resume: false),
                  let builder = try? PyramidBuilder(source: source, georeference: georeference, stores: [store], options: options),
                  builder.total <= 16 else { return }
            _ = try? await builder.run { _, _ in }
        }
        Scratch.shared.remove(".pyramid.partial")
        Scratch.shared.remove("pyramid")
    }
}
