import Testing
import Colors

/// Colours as map data writes them: hex (3, 4, 6 or 8 digits, with or without #) and CSS names.
@Suite struct ColorTests {
    @Test func hexAndNamesParse() {
        #expect(Color(hex: "#f00") == Color(red: 1, green: 0, blue: 0))
        #expect(Color(hex: "00ff00")?.hexString == "#00ff00")
        #expect(Color(hex: "#0000ff80")?.alpha == 128.0 / 255)
        #expect(Color(hex: "navy") == Color(red8: 0, green8: 0, blue8: 128))
    }

    @Test func malformedTextIsNoColour() {
        #expect(Color(hex: "#12345") == nil && Color(hex: "#ggg") == nil && Color(hex: "") == nil)
    }
}
