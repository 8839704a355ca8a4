import Foundation
@_spi(PNGDecoders) import Canvas

extension FuzzTarget {
    /// ImageRowReader's PNG rows (PNGRowStream's igzip, libpng taking over on damage) against
    /// libpng's decode of the same file: no trap, and a file whose rows were all read has
    /// libpng's pixels, whether the stream read them all or libpng took over partway.
    static let pngRows = FuzzTarget(name: "pngrows",
                                    input: "a PNG image (then again with its checksums made right), or a recipe for one (PNGRecipe)") { bytes in
        forEachPNG(bytes, compareRows)
    }

    /// Traps when the stream read every row of a file libpng refuses (unless zlib refuses
    /// its deflate stream too: igzip, like libdeflate, inflates a few streams zlib does not),
    /// or read other pixels than libpng's.
    static func compareRows(_ png: [UInt8]) {
        let path = Scratch.shared.path("rows.png")
        guard (try? Data(png).write(to: URL(fileURLWithPath: path))) != nil,
              let reader = try? ImageRowReader(path: path, limits: scanBudget) else { return }
        let rowBytes = reader.width * 4
        var pixels = [UInt8](repeating: 0, count: rowBytes * reader.height)
        let read = pixels.withUnsafeMutableBufferPointer { out -> Bool in
            for y in 0..<reader.height {
                guard (try? reader.readRow(into: UnsafeMutableBufferPointer(rebasing: out[y * rowBytes..<(y + 1) * rowBytes]))) != nil else { return false }
            }
            return true
        }
        // A file the stream did not start on is libpng's alone; one it started on is one
        // PNGReader reads, whose rows libpng's row reader and simplified API give alike, so
        // rows from before and after a fallback are compared too.
        guard read, reader.streamedFromStart else { return }
        let reference: RGBAImage
        do {
            reference = try RGBAImage.decodedByLibpng(png)
        } catch {
            guard let stream = PNGChecksums.idatStream(png), PNGChecksums.zlibRefuses(stream) else {
                fatalError("PNGRowStream read a \(reader.width)x\(reader.height) PNG that libpng refuses: \(error)")
            }
            return
        }
        guard reference.width == reader.width, reference.height == reader.height, reference.pixels == pixels else {
            fatalError("PNGRowStream's rows of a \(reader.width)x\(reader.height) PNG are not libpng's")
        }
    }
}
