import Foundation
import Testing
import Canvas

/// Golden-image comparison: the image must match `Goldens/NAME.png` within `tolerance`
/// per channel, except at most `allowedMismatches` pixels (antialiasing of text varies
/// by a pixel or two between font builds). On failure the actual image is written to
/// `Failures/NAME.png` beside the goldens; `TILEKIT_RECORD_GOLDENS=1` rewrites the goldens.
func expectGolden(_ image: RGBAImage, _ name: String, tolerance: Int = 2, allowedMismatches: Int = 0,
                  sourceLocation: SourceLocation = #_sourceLocation, filePath: String = #filePath) throws {
    let directory = URL(fileURLWithPath: filePath).deletingLastPathComponent()
    let golden = directory.appendingPathComponent("Goldens/\(name).png")
    if ProcessInfo.processInfo.environment["TILEKIT_RECORD_GOLDENS"] == "1" {
        try Data(image.encoded(.png(compressionLevel: 9, filter: .all))).write(to: golden)
        return
    }
    guard FileManager.default.fileExists(atPath: golden.path) else {
        try writeFailure(image, name, directory)
        Issue.record("no golden image \(golden.path); record with TILEKIT_RECORD_GOLDENS=1 after looking at it", sourceLocation: sourceLocation)
        return
    }
    let expected = try RGBAImage(contentsOf: golden)
    guard expected.width == image.width, expected.height == image.height else {
        try writeFailure(image, name, directory)
        Issue.record("\(name): size \(image.width)x\(image.height), golden \(expected.width)x\(expected.height)", sourceLocation: sourceLocation)
        return
    }
    var mismatches = 0, worst = 0
    for y in 0..<image.height {
        for x in 0..<image.width {
            let d = image[x, y].distance(to: expected[x, y])
            worst = max(worst, d)
            if d > tolerance { mismatches += 1 }
        }
    }
    if mismatches > allowedMismatches {
        let path = try writeFailure(image, name, directory)
        Issue.record("\(name): \(mismatches) pixels differ by more than \(tolerance) (worst \(worst)); actual image at \(path)",
                     sourceLocation: sourceLocation)
    }
}

@discardableResult
private func writeFailure(_ image: RGBAImage, _ name: String, _ directory: URL) throws -> String {
    let failures = directory.appendingPathComponent("Failures")
    try FileManager.default.createDirectory(at: failures, withIntermediateDirectories: true)
    let url = failures.appendingPathComponent("\(name).png")
    try Data(image.encoded()).write(to: url)
    return url.path
}

/// Asserts one pixel is within `tolerance` of a colour.
func expectPixel(_ image: RGBAImage, _ x: Int, _ y: Int, _ expected: Pixel, tolerance: Int = 2,
                 sourceLocation: SourceLocation = #_sourceLocation) {
    let actual = image[x, y]
    #expect(actual.distance(to: expected) <= tolerance, "pixel (\(x), \(y)) is \(actual), expected \(expected)",
            sourceLocation: sourceLocation)
}

let red = Pixel(red: 255, green: 0, blue: 0)
let blue = Pixel(red: 0, green: 0, blue: 255)
let white = Pixel(red: 255, green: 255, blue: 255)
let black = Pixel(red: 0, green: 0, blue: 0)
let transparent = Pixel(red: 0, green: 0, blue: 0, alpha: 0)
