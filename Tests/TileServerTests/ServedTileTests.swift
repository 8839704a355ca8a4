import Foundation
import Testing
import Canvas
import TileMath
@testable import TileServer

/// Tiles, their caching and TileJSON, over the `ProjectFixture` map (one behaviour per test).
@Suite struct ServedTileTests {
    /// The fixture's z15 tile that the red line of pins.geojson crosses.
    static let lineTile = TileID(containing: Coordinate(latitude: 40.7678, longitude: -73.9719), zoom: 15)
    static let linePath = "/maps/park/15/\(lineTile.x)/\(lineTile.y).png"

    @Test func tileIsAPNGOfTheTileSize() async throws {
        try await ProjectFixture.withServer { server in
            let response = await server.get(Self.linePath)
            #expect(response.status == 200 && response.header("Content-Type") == "image/png")
            let image = try RGBAImage(decoding: response.body)
            #expect(image.width == 256)
        }
    }

    @Test func featureLayerIsDrawnOverTheBase() async throws {
        try await ProjectFixture.withServer { server in
            let image = try RGBAImage(decoding: await server.get(Self.linePath).body)
            let red = Pixel(Color(red8: 0xb3, green8: 0x26, blue8: 0x1e))
            #expect((0..<256).contains { x in (0..<256).contains { y in image[x, y].distance(to: red) < 30 } })
        }
    }

    @Test func tileCarriesAnETagAndTheLayersMaxAge() async throws {
        try await ProjectFixture.withServer { server in
            let response = await server.get(Self.linePath)
            #expect(response.header("ETag") != nil)
            #expect(response.header("Cache-Control") == "public, max-age=600")
        }
    }

    @Test func fastPathAnswersAMatchingETagWith304() async throws {
        try await ProjectFixture.withServer { server in
            let etag = try #require(await server.get(Self.linePath).header("ETag"))
            let again = try #require(server.fast(HTTPRequest(method: "GET", path: Self.linePath, headers: ["if-none-match": etag])))
            #expect(again.status == 304 && again.body.isEmpty)
        }
    }

    @Test func repeatedTileIsServedFromMemory() async throws {
        try await ProjectFixture.withServer { server in
            _ = await server.get(Self.linePath)
            #expect(server.fast(HTTPRequest(method: "GET", path: Self.linePath))?.status == 200)
            #expect(server.cache.statistics.hits >= 1)
        }
    }

    @Test func retinaWebPTileIsTwiceTheSize() async throws {
        try await ProjectFixture.withServer { server in
            let retina = await server.get("/maps/park/layers/base/15/\(Self.lineTile.x)/\(Self.lineTile.y)@2x.webp")
            #expect(retina.status == 200 && retina.header("Content-Type") == "image/webp")
            let image = try RGBAImage(decoding: retina.body)
            #expect(image.width == 512)
        }
    }

    @Test func zoomBeyondTheNativeMaximumIsOverzoomed() async throws {
        try await ProjectFixture.withServer { server in
            let deep = await server.get("/maps/park/layers/base/17/\(Self.lineTile.x * 4)/\(Self.lineTile.y * 4).png")
            #expect(deep.status == 200 && deep.header("X-Tile-Provenance")?.hasPrefix("overzoomed") == true)
        }
    }

    @Test func tileOutsideTheBoundsIsNoContent() async throws {
        try await ProjectFixture.withServer { server in
            #expect(await server.get("/maps/park/12/0/0.png").status == 204)  // the default absence answer
        }
    }

    @Test func tileOutsideTheZoomRangeIsNotFound() async throws {
        try await ProjectFixture.withServer { server in
            #expect(await server.get("/maps/park/5/9/12.png").status == 404)
        }
    }

    @Test func tileJSONDeclaresItsVersionAndZoomRange() async throws {
        try await ProjectFixture.withServer { server in
            let json = try Self.object(await server.get("/maps/park.json"))
            #expect(json["tilejson"] as? String == "3.0.0")
            #expect(json["minzoom"] as? Int == 12 && json["maxzoom"] as? Int == 18)
        }
    }

    @Test func tileJSONTileURLUsesTheRequestsHost() async throws {
        try await ProjectFixture.withServer { server in
            let json = try Self.object(await server.get("/maps/park.json", headers: ["host": "tiles.example:8080"]))
            #expect((json["tiles"] as? [String]) == ["http://tiles.example:8080/maps/park/{z}/{x}/{y}.png"])
        }
    }

    @Test func tileJSONCarriesTheMapsBoundsAttributionAndCenter() async throws {
        try await ProjectFixture.withServer { server in
            let json = try Self.object(await server.get("/maps/park.json"))
            #expect((json["bounds"] as? [Double]) == [-73.99, 40.76, -73.95, 40.80])
            #expect(json["attribution"] as? String == "test data")
            #expect((json["center"] as? [Double]) == [-73.9725, 40.7712, 15])
        }
    }

    /// The base layer alone: tiles exist to zoom 15, clients may overzoom from there.
    @Test func layerTileJSONDeclaresFillzoomAtTheNativeMaximum() async throws {
        try await ProjectFixture.withServer { server in
            let json = try Self.object(await server.get("/maps/park/layers/base.json"))
            #expect(json["fillzoom"] as? Int == 15)
            #expect((json["tiles"] as? [String])?.first?.hasSuffix("/maps/park/layers/base/{z}/{x}/{y}.png") == true)
        }
    }

    /// The bytes clients cache and diff: sorted keys, no spaces, unescaped slashes, shortest numbers
    /// (what `JSONSerialization` wrote before TileJSON became a Codable type).
    @Test func tileJSONBytesAreSortedCompactJSON() async throws {
        try await ProjectFixture.withServer { server in
            let body = Data(await server.get("/maps/park/layers/base.json").body)
            let object = try JSONSerialization.jsonObject(with: body)
            let canonical = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
            #expect(String(decoding: body, as: UTF8.self) == String(decoding: canonical, as: UTF8.self))
            #expect(String(decoding: body, as: UTF8.self).hasPrefix(#"{"attribution":"test data","bounds":["#))
        }
    }

    static func object(_ response: HTTPResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }
}
