import Testing
import TileMath
@testable import TileSources

@Suite struct URLTemplateTests {
    let tile = TileID(z: 5, x: 9, y: 11)

    @Test(arguments: [
        ("https://tile.openstreetmap.org/{z}/{x}/{y}.png", "https://tile.openstreetmap.org/5/9/11.png"),
        ("https://{s}.tiles.example/{z}/{x}/{-y}.png", "https://c.tiles.example/5/9/20.png"),  // (9 + 11) % 3 = 2
        ("https://a.basemaps.cartocdn.com/light_all/{z}/{x}/{y}{r}.png", "https://a.basemaps.cartocdn.com/light_all/5/9/11@2x.png"),
        ("https://ecn.t0.tiles.virtualearth.net/tiles/a{q}.jpeg?g=1", "https://ecn.t0.tiles.virtualearth.net/tiles/a\(TileID(z: 5, x: 9, y: 11).quadkey).jpeg?g=1"),
        ("https://example/{quadkey}", "https://example/\(TileID(z: 5, x: 9, y: 11).quadkey)"),
    ])
    func expansions(template: String, expected: String) throws {
        let scale = template.contains("{r}") ? 2 : 1
        #expect(try URLTemplate(template).url(for: tile, scale: scale) == expected)
    }

    @Test func variablesSubdomainsAndScale() throws {
        let t = try URLTemplate("https://{s}.example/{variant}/{z}/{x}/{y}{r}.png?key={apikey}&floor={floor}",
                                subdomains: URLTemplate.subdomains("t1,t2"), variables: ["variant": "dark", "apikey": "K", "floor": "2"])
        #expect(t.url(for: tile) == "https://t1.example/dark/5/9/11.png?key=K&floor=2")   // (9 + 11) % 2 = 0
        #expect(t.url(for: TileID(z: 5, x: 10, y: 11), scale: 2) == "https://t2.example/dark/5/10/11@2x.png?key=K&floor=2")
        #expect(URLTemplate.subdomains("abcd") == ["a", "b", "c", "d"])
        // A variable named r overrides the built-in (xyzservices providers do this).
        #expect(try URLTemplate("https://x/{z}/{x}/{y}{r}", variables: ["r": ""]).url(for: tile, scale: 2) == "https://x/5/9/11")
    }

    @Test func badTemplatesNameTheProblem() {
        #expect(throws: URLTemplateError.unknownPlaceholder("apikey")) { try URLTemplate("https://x/{z}/{x}/{y}?k={apikey}") }
        #expect(throws: URLTemplateError.unclosedBrace("https://x/{z/{x}/{y}", offset: 10)) { try URLTemplate("https://x/{z/{x}/{y}") }
        #expect(throws: URLTemplateError.missingTileKeys("https://x/{z}/{x}.png")) { try URLTemplate("https://x/{z}/{x}.png") }
        #expect(throws: URLTemplateError.emptyPlaceholder("https://x/{}/{z}/{x}/{y}")) { try URLTemplate("https://x/{}/{z}/{x}/{y}") }
        #expect(throws: URLTemplateError.noSubdomains("https://{s}/{z}/{x}/{y}")) { try URLTemplate("https://{s}/{z}/{x}/{y}", subdomains: []) }
        #expect(URLTemplateError.unknownPlaceholder("apikey").description.contains("--var apikey=VALUE"))
    }
}
