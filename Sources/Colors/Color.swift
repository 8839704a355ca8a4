import Foundation

// Colors: the colour type alone, pure Swift, so that modules which only read or write colours
// (Features, and Game through it) do not link cairo and Pango. Canvas re-exports this module.

/// A colour with straight (not premultiplied) alpha, each channel in [0, 1], sRGB.
public struct Color: Hashable, Sendable, CustomStringConvertible {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// From 8-bit channels.
    public init(red8: UInt8, green8: UInt8, blue8: UInt8, alpha8: UInt8 = 255) {
        self.init(red: Double(red8) / 255, green: Double(green8) / 255, blue: Double(blue8) / 255, alpha: Double(alpha8) / 255)
    }

    /// Parses `#rgb`, `#rrggbb`, `#rrggbbaa` (the `#` optional, as simplestyle-spec allows)
    /// or a CSS basic colour name; nil when it is neither.
    public init?(hex text: String) {
        var hex = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let named = Self.named[hex] {
            self = named
            return
        }
        if hex.hasPrefix("#") { hex.removeFirst() }
        guard hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) else { return nil }
        switch hex.count {
        case 3:
            func expand(_ shift: UInt32) -> UInt8 { UInt8((value >> shift) & 0xF) * 17 }
            self.init(red8: expand(8), green8: expand(4), blue8: expand(0))
        case 6:
            self.init(red8: UInt8(value >> 16 & 0xFF), green8: UInt8(value >> 8 & 0xFF), blue8: UInt8(value & 0xFF))
        case 8:
            self.init(red8: UInt8(value >> 24 & 0xFF), green8: UInt8(value >> 16 & 0xFF),
                      blue8: UInt8(value >> 8 & 0xFF), alpha8: UInt8(value & 0xFF))
        default:
            return nil
        }
    }

    public func withAlpha(_ alpha: Double) -> Color {
        Color(red: red, green: green, blue: blue, alpha: alpha)
    }

    /// `#rrggbb`, or `#rrggbbaa` when not opaque.
    public var hexString: String {
        func byte(_ value: Double) -> String { String(format: "%02x", Int((max(0, min(1, value)) * 255).rounded())) }
        return "#" + byte(red) + byte(green) + byte(blue) + (alpha < 1 ? byte(alpha) : "")
    }

    public var description: String { hexString }

    public static let clear = Color(red: 0, green: 0, blue: 0, alpha: 0)
    public static let black = Color(red: 0, green: 0, blue: 0)
    public static let white = Color(red: 1, green: 1, blue: 1)

    /// The CSS basic colours, for files that name a colour instead of spelling it.
    static let named: [String: Color] = [
        "black": .black, "white": .white, "transparent": .clear,
        "red": Color(red8: 255, green8: 0, blue8: 0), "green": Color(red8: 0, green8: 128, blue8: 0),
        "blue": Color(red8: 0, green8: 0, blue8: 255), "yellow": Color(red8: 255, green8: 255, blue8: 0),
        "orange": Color(red8: 255, green8: 165, blue8: 0), "purple": Color(red8: 128, green8: 0, blue8: 128),
        "gray": Color(red8: 128, green8: 128, blue8: 128), "grey": Color(red8: 128, green8: 128, blue8: 128),
        "silver": Color(red8: 192, green8: 192, blue8: 192), "maroon": Color(red8: 128, green8: 0, blue8: 0),
        "olive": Color(red8: 128, green8: 128, blue8: 0), "lime": Color(red8: 0, green8: 255, blue8: 0),
        "aqua": Color(red8: 0, green8: 255, blue8: 255), "teal": Color(red8: 0, green8: 128, blue8: 128),
        "navy": Color(red8: 0, green8: 0, blue8: 128), "fuchsia": Color(red8: 255, green8: 0, blue8: 255),
    ]
}
