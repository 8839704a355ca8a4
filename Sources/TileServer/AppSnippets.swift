import Foundation
import TileMath
import MapProjects

/// The lines that put a served map into an app, filled in with the map's real tile URL,
/// zooms and bounds: MapKit, the Google Maps SDK for Android, Leaflet, and the commands that
/// bundle its tiles for offline use. The start page shows them under each map.
struct AppSnippets {
    /// `http://HOST:PORT` as the client reached the server.
    let origin: String
    let name: String
    let minZoom: Int
    let maxZoom: Int
    let bounds: BoundingBox?
    let center: Coordinate
    let zoom: Int

    init(map: ServedMap, origin: String) {
        self.origin = origin
        name = map.project.name
        minZoom = map.project.minZoom
        maxZoom = map.project.maxZoom
        bounds = map.project.bounds ?? map.bounds
        center = map.center
        zoom = map.initialZoom
    }

    /// The tile URL with `suffix` before the extension (`@{scale}x`, `{r}`, `@2x`).
    func template(_ suffix: String, z: String = "{z}", x: String = "{x}", y: String = "{y}", origin: String? = nil) -> String {
        "\(origin ?? self.origin)/maps/\(name)/\(z)/\(x)/\(y)\(suffix).png"
    }

    /// The Android emulator reaches the host machine at 10.0.2.2: the same port there.
    var emulatorOrigin: String {
        let port = origin.split(separator: ":").last.flatMap { Int($0) }
        return "http://10.0.2.2" + (port.map { ":\($0)" } ?? "")
    }

    static func number(_ value: Double) -> String {
        var text = String(format: "%.4f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text == "-0" ? "0" : text
    }

    var mapKit: String {
        var lines = [
            "let overlay = MKTileOverlay(urlTemplate: \"\(template("@{scale}x"))\")",
            "overlay.canReplaceMapContent = true   // the map replaces Apple's; false lays it over",
            "overlay.minimumZ = \(minZoom)",
            "overlay.maximumZ = \(maxZoom)",
            "mapView.addOverlay(overlay, level: .aboveLabels)",
        ]
        if let b = bounds {
            lines += [
                "mapView.cameraBoundary = MKMapView.CameraBoundary(coordinateRegion: MKCoordinateRegion(",
                "    center: CLLocationCoordinate2D(latitude: \(Self.number(b.center.latitude)), longitude: \(Self.number(b.center.longitude))),",
                "    span: MKCoordinateSpan(latitudeDelta: \(Self.number(b.latitudeSpan)), longitudeDelta: \(Self.number(b.longitudeSpan)))))",
            ]
        }
        lines += [
            "// in your MKMapViewDelegate:",
            "func mapView(_ mapView: MKMapView, rendererFor overlay: MKOverlay) -> MKOverlayRenderer {",
            "    MKTileOverlayRenderer(overlay: overlay)",
            "}",
        ]
        return lines.joined(separator: "\n")
    }

    var android: String {
        var lines = [
            "val tiles = object : UrlTileProvider(256, 256) {",
            "    override fun getTileUrl(x: Int, y: Int, zoom: Int): URL? =",
            "        if (zoom in \(minZoom)..\(maxZoom)) URL(\"\(template("@2x", z: "$zoom", x: "$x", y: "$y", origin: emulatorOrigin))\") else null",
            "}",
            "map.mapType = GoogleMap.MAP_TYPE_NONE   // the map replaces Google's; keep MAP_TYPE_NORMAL to lay it over",
            "map.addTileOverlay(TileOverlayOptions().tileProvider(tiles).zIndex(1f))",
            "map.setMinZoomPreference(\(minZoom)f)",
            "map.setMaxZoomPreference(\(maxZoom)f)",
        ]
        if let b = bounds {
            lines.append("map.setLatLngBoundsForCameraTarget(LatLngBounds(LatLng(\(Self.number(b.south)), \(Self.number(b.west))), LatLng(\(Self.number(b.north)), \(Self.number(b.east)))))")
        }
        return lines.joined(separator: "\n")
    }

    var leaflet: String {
        let maxBounds = bounds.map { b in
            ", maxBounds: [[\(Self.number(b.south)), \(Self.number(b.west))], [\(Self.number(b.north)), \(Self.number(b.east))]]"
        } ?? ""
        return """
        const map = L.map("map", {minZoom: \(minZoom), maxZoom: \(maxZoom)\(maxBounds)})
          .setView([\(Self.number(center.latitude)), \(Self.number(center.longitude))], \(zoom));
        L.tileLayer("\(template("{r}"))", {minZoom: \(minZoom), maxZoom: \(maxZoom)}).addTo(map);
        """
    }

    /// Drawing the composed map into a store with no server, then the app-bundle layouts.
    var offline: String {
        let box = bounds.map { "\(Self.number($0.west)),\(Self.number($0.south)),\(Self.number($0.east)),\(Self.number($0.north))" } ?? "W,S,E,N"
        let top = min(maxZoom, minZoom + 3)
        return """
        tilekit seed --source path/to/\(name)/map.json --bbox \(box) --zoom \(minZoom)-\(top) --out \(name).mbtiles
        tilekit convert \(name).mbtiles Tiles            # Tiles/{z}/{x}/{y}.png, as MapKit's bundled tiles
        tilekit convert \(name).mbtiles \(name).pmtiles   # or one PMTiles file
        """
    }

    /// The HTML section of the start page for this map.
    var html: String {
        func block(_ title: String, _ code: String) -> String {
            "<h3>\(title)</h3><pre><code>\(Viewer.escape(code))</code></pre>"
        }
        return "<details><summary>Put it in an app</summary>"
            + block("MapKit (iOS, macOS): <code>{scale}</code> becomes the screen's 1, 2 or 3", mapKit)
            + block("Google Maps SDK for Android (the emulator reaches this machine at 10.0.2.2)", android)
            + block("Leaflet (<code>{r}</code> is @2x on high-DPI screens)", leaflet)
            + block("Offline in the app bundle", offline)
            + "</details>"
    }
}
