import Foundation
import Testing
import Canvas
import TileMath
@testable import TileServer

/// Feature files, static images, request limits and errors, and metrics over the
/// `ProjectFixture` map (one behaviour per test).
@Suite struct ServedFeaturesAndStaticImagesTests {
    /// Small limits, so that each is easy to cross.
    static var limits: ServerOptions {
        var options = ServerOptions()
        options.maxStaticSide = 1024
        options.maxMarkers = 3
        return options
    }

    @Test func featureFileIsServedAsGeoJSON() async throws {
        try await ProjectFixture.withServer { server in
            let geojson = await server.get("/maps/park/features/pins.geojson")
            #expect(geojson.status == 200 && geojson.header("Content-Type") == "application/geo+json")
        }
    }

    /// Titles and subtitles travel to the viewer.
    @Test func servedFeaturesKeepTheirTitleAndDescription() async throws {
        try await ProjectFixture.withServer { server in
            let geojson = await server.get("/maps/park/features/pins.geojson", headers: ["accept-encoding": "gzip"])
            let text = String(decoding: geojson.header("Content-Encoding") == "gzip" ? try gunzip(geojson.body) : geojson.body, as: UTF8.self)
            #expect(text.contains("\"title\":\"Goblin\"") && text.contains("\"description\":\"Central Park Zoo\""))
        }
    }

    static let markedCenter = "/maps/park/static/-73.9725,40.7712,15/320x200@2x.png"
    static let blueMarker = ["markers": "-73.9725,40.7712,#0000ff"]

    @Test func staticImageAt2xHasTwiceTheRequestedSize() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let image = await server.get(Self.markedCenter, query: Self.blueMarker)
            #expect(image.status == 200)
            let picture = try RGBAImage(decoding: image.body)
            #expect(picture.width == 640 && picture.height == 400)
        }
    }

    @Test func staticImageReportsItsGeometryInAHeader() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let image = await server.get(Self.markedCenter, query: Self.blueMarker)
            #expect(image.header("X-Snapshot-Geometry")?.contains("\"zoom\":15") == true)
            // Maps allow any origin by default: a page's script may read the geometry too.
            #expect(image.header("Access-Control-Allow-Origin") == "*")
            #expect(image.header("Access-Control-Expose-Headers") == "X-Snapshot-Geometry")
        }
    }

    @Test func staticMarkerIsDrawnAtItsCoordinateInItsColour() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let picture = try RGBAImage(decoding: await server.get(Self.markedCenter, query: Self.blueMarker).body)
            #expect(picture[320, 200].distance(to: Pixel(red: 0, green: 0, blue: 255)) < 10)
        }
    }

    @Test func staticGeometryJSONListsEveryMarker() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let geometry = await server.get("/maps/park/static/auto/320x200.json", query: ["markers": "-73.9725,40.7712|-73.96,40.78"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(geometry.body)) as? [String: Any])
            #expect((json["markers"] as? [[String: Any]])?.count == 2)
        }
    }

    @Test func postedGeoJSONBodyIsDrawn() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let posted = await server.handle(HTTPRequest(method: "POST", path: "/maps/park/static/auto/200x200.png",
                                                         body: Array(#"{"type":"Point","coordinates":[-73.97,40.77]}"#.utf8)))
            #expect(posted.status == 200)
        }
    }

    @Test func brokenPostedGeoJSONIsRefusedNamingTheBadField() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let broken = await server.handle(HTTPRequest(method: "POST", path: "/maps/park/static/auto/200x200.png",
                                                         body: Array(#"{"type":"Point","coordinates":[1]}"#.utf8)))
            #expect(broken.status == 400 && broken.bodyText.contains("request body: coordinates"))
        }
    }

    @Test func staticImageLargerThanTheLimitIsRefusedNamingTheLimit() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let big = await server.get("/maps/park/static/0,0,2/2000x100.png")
            #expect(big.status == 400 && big.bodyText.contains("1-1024"))
        }
    }

    @Test func tooManyMarkersAreRefusedNamingTheLimit() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            let many = await server.get("/maps/park/static/auto/100x100.png", query: ["markers": "1,1|2,2|3,3|4,4"])
            #expect(many.status == 400 && many.bodyText.contains("at most 3"))
        }
    }

    @Test func unreadableEncodedPathIsRefused() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            #expect(await server.get("/maps/park/static/auto/100x100.png", query: ["path": "zzz"]).status == 400)
        }
    }

    @Test func unsupportedMethodIs405NamingTheAllowedOnes() async throws {
        try await ProjectFixture.withServer { server in
            let delete = await server.handle(HTTPRequest(method: "DELETE", path: "/maps/park/1/0/0.png"))
            #expect(delete.status == 405 && delete.header("Allow") == "GET, HEAD, OPTIONS")
            #expect(await server.handle(HTTPRequest(method: "POST", path: "/maps/park/1/0/0.png")).status == 405)
        }
    }

    @Test(arguments: ["/maps/nowhere/1/0/0.png", "/maps/park/layers/nope/1/0/0.png", "/maps/park/features/base.geojson"])
    func unknownMapLayerOrFeatureLayerIsNotFound(path: String) async throws {
        try await ProjectFixture.withServer { server in
            #expect(await server.get(path).status == 404)
        }
    }

    @Test func metricsCountRequestsByRouteAndStatus() async throws {
        try await ProjectFixture.withServer(Self.limits) { server in
            _ = await server.get("/maps/park/static/0,0,2/2000x100.png")
            _ = await server.get("/maps/park/static/auto/100x100.png", query: ["path": "zzz"])
            _ = await server.get("/maps/park/static/-73.9725,40.7712,15/100x100.png")
            let metrics = await server.get("/metrics").bodyText
            #expect(metrics.contains(#"tilekit_requests_total{route="static",status="400"} 2"#), "\(metrics)")
            #expect(metrics.contains(#"tilekit_requests_total{route="static",status="200"} 1"#), "\(metrics)")
        }
    }

    @Test func metricsExportARequestDurationHistogram() async throws {
        try await ProjectFixture.withServer { server in
            _ = await server.get("/maps/park/12/0/0.png")
            #expect(await server.get("/metrics").bodyText.contains(#"tilekit_request_duration_seconds_bucket{le="+Inf"}"#))
        }
    }
}
