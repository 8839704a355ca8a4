import Foundation
import Canvas
import TileMath
import Rendering

/// The files the server hands out under `/assets/` besides the viewer's own script and
/// style: Leaflet (Debian's libjs-leaflet) and the hero icon. They are prepared before the
/// server is built and passed in, so building the core reads no file and draws nothing.
public struct ServerAssets: Sendable {
    public struct Asset: Sendable {
        public var bytes: [UInt8]
        /// The `Content-Type` it is served with.
        public var type: String

        public init(bytes: [UInt8], type: String) {
            self.bytes = bytes
            self.type = type
        }
    }

    /// By the name after `/assets/` (one of `Route.assets`).
    public var files: [String: Asset]

    public init(files: [String: Asset] = [:]) {
        self.files = files
    }

    /// Leaflet's files found in `leafletFolder` (a missing one is answered 404 with a hint),
    /// and the hero icon for the user's position, drawn at 2x for sharp screens.
    public static func prepare(leafletFolder: String) -> ServerAssets {
        var files = [String: Asset]()
        for (name, type) in [("leaflet.js", "application/javascript"), ("leaflet.css", "text/css"),
                             ("images/layers.png", "image/png"), ("images/layers-2x.png", "image/png")] {
            if let data = FileManager.default.contents(atPath: leafletFolder + "/" + name) { files[name] = Asset(bytes: Array(data), type: type) }
        }
        if let hero = heroPNG { files["hero.png"] = Asset(bytes: hero, type: "image/png") }
        return ServerAssets(files: files)
    }

    /// Drawn once per process: it never changes.
    static let heroPNG: [UInt8]? = {
        guard let canvas = try? Canvas(width: 56, height: 56) else { return nil }
        MarkerIcon.hero.draw(on: canvas, at: PixelPoint(x: 28, y: 28), radiusPixels: 26, color: Color(red8: 0x1f, green8: 0x5f, blue8: 0xbf))
        return try? canvas.encoded(.png())
    }()
}
