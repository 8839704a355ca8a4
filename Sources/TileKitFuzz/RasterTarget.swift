import Foundation
import TileMath
import Canvas

// The canvas's own rasterizer (CoverageRaster, StrokeOutline, Subpath) and cairo behind it,
// fed paths of any coordinates: NaN, infinities, subnormals, 1e300, as well as plain ones.

extension FuzzTarget {
    static let raster = FuzzTarget(name: "raster", input: "path commands (move, line, curve, arc, close, fill, stroke) drawn on a 64x48 canvas") { bytes in
        guard let canvas = try? Canvas(width: 64, height: 48, background: .white) else { return }
        var reader = CommandReader(bytes: bytes)
        var path = Path()
        while let op = reader.byte(), path.elements.count < 2048 {
            switch op & 7 {
            case 0: path.move(to: reader.point(op))
            case 1: path.line(to: reader.point(op))
            case 2: path.curve(to: reader.point(op), control1: reader.point(op), control2: reader.point(op))
            case 3: path.arc(center: reader.point(op), radius: reader.number(op), startAngle: reader.number(op), endAngle: reader.number(op))
            case 4: path.close()
            case 5:
                canvas.fill(path, with: .color(reader.color()), rule: op & 8 == 0 ? .nonZero : .evenOdd)
                path = Path()
            case 6:
                let caps: [StrokeStyle.Cap] = [.butt, .round, .square]
                let style = StrokeStyle(width: reader.number(op), cap: caps[Int(op >> 3) % 3], join: op & 0x40 == 0 ? .round : .miter)
                canvas.stroke(path, with: .color(reader.color()), style: style)
                path = Path()
            default:
                canvas.setAntialias(op & 8 == 0 ? .best : .fast)
            }
        }
        _ = canvas.makeImage()
    }
}

/// Reads commands' operands: with the op's top bit set, a number is any 8 bytes taken as a
/// Double (NaN, infinity, subnormal, huge); otherwise two bytes as sixteenths of a pixel
/// around the canvas (−2048 to 2048), the shapes a map draws.
private struct CommandReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func number(_ op: UInt8) -> Double {
        if op & 0x80 != 0 {
            var raw: UInt64 = 0
            for _ in 0..<8 { raw = raw << 8 | UInt64(byte() ?? 0) }
            return Double(bitPattern: raw)
        }
        let high = UInt16(byte() ?? 0), low = UInt16(byte() ?? 0)
        return Double(Int16(bitPattern: high << 8 | low)) / 16
    }

    mutating func point(_ op: UInt8) -> PixelPoint { PixelPoint(x: number(op), y: number(op)) }

    mutating func color() -> Color {
        Color(red: Double(byte() ?? 0) / 255, green: Double(byte() ?? 0) / 255, blue: Double(byte() ?? 0) / 255, alpha: Double(byte() ?? 255) / 255)
    }
}
