import Foundation

/// An image in memory: 8-bit RGBA pixels with straight alpha, rows top to bottom,
/// `width * 4` bytes a row with no padding.
public struct RGBAImage: Hashable, Sendable {
    public let width: Int
    public let height: Int
    /// `width * height * 4` bytes: R, G, B, A for each pixel, row-major from the top-left.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "an image needs at least one pixel")
        precondition(pixels.count == width * height * 4, "pixel buffer of \(pixels.count) bytes for \(width)x\(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// An image filled with one colour.
    public init(width: Int, height: Int, color: Color = .clear) {
        let px = Pixel(color)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for i in stride(from: 0, to: pixels.count, by: 4) {
            pixels[i] = px.red; pixels[i + 1] = px.green; pixels[i + 2] = px.blue; pixels[i + 3] = px.alpha
        }
        self.init(width: width, height: height, pixels: pixels)
    }

    public subscript(x: Int, y: Int) -> Pixel {
        get {
            let i = (y * width + x) * 4
            return Pixel(red: pixels[i], green: pixels[i + 1], blue: pixels[i + 2], alpha: pixels[i + 3])
        }
        set {
            let i = (y * width + x) * 4
            pixels[i] = newValue.red; pixels[i + 1] = newValue.green; pixels[i + 2] = newValue.blue; pixels[i + 3] = newValue.alpha
        }
    }

    /// True when every pixel has alpha 255 (PNG can then drop the alpha channel).
    public var isOpaque: Bool {
        pixels.withUnsafeBufferPointer { buffer in
            var i = 3
            while i < buffer.count {
                if buffer[i] != 255 { return false }
                i += 4
            }
            return true
        }
    }

    /// True when every pixel has alpha 0 (nothing to store).
    public var isTransparent: Bool {
        pixels.withUnsafeBufferPointer { buffer in
            var i = 3
            while i < buffer.count {
                if buffer[i] != 0 { return false }
                i += 4
            }
            return true
        }
    }

    /// The colour of the whole image when every pixel is the same, else nil (single-colour
    /// tiles are stored once).
    public var uniformPixel: Pixel? {
        let first = self[0, 0]
        return pixels.withUnsafeBytes { raw in
            let words = raw.bindMemory(to: UInt32.self)
            let value = words[0]
            return words.allSatisfy { $0 == value } ? first : nil
        }
    }

    /// A rectangle cut out of the image (clamped to it).
    public func cropped(x: Int, y: Int, width: Int, height: Int) -> RGBAImage {
        let x0 = max(0, x), y0 = max(0, y)
        let x1 = min(self.width, x + width), y1 = min(self.height, y + height)
        precondition(x1 > x0 && y1 > y0, "crop outside the image")
        var out = [UInt8]()
        out.reserveCapacity((x1 - x0) * (y1 - y0) * 4)
        for row in y0..<y1 {
            let start = (row * self.width + x0) * 4
            out.append(contentsOf: pixels[start..<start + (x1 - x0) * 4])
        }
        return RGBAImage(width: x1 - x0, height: y1 - y0, pixels: out)
    }
}

/// One 8-bit RGBA pixel, straight alpha.
public struct Pixel: Hashable, Sendable, CustomStringConvertible {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public init(_ color: Color) {
        func byte(_ value: Double) -> UInt8 { UInt8((max(0, min(1, value)) * 255).rounded()) }
        self.init(red: byte(color.red), green: byte(color.green), blue: byte(color.blue), alpha: byte(color.alpha))
    }

    public var color: Color { Color(red8: red, green8: green, blue8: blue, alpha8: alpha) }

    /// The largest difference of any channel.
    public func distance(to other: Pixel) -> Int {
        max(abs(Int(red) - Int(other.red)), abs(Int(green) - Int(other.green)),
            abs(Int(blue) - Int(other.blue)), abs(Int(alpha) - Int(other.alpha)))
    }

    public var description: String { "rgba(\(red),\(green),\(blue),\(alpha))" }
}
