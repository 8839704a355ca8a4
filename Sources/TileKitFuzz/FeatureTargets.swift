import Foundation
import TileMath
import Canvas
import Features
import Game
import Rendering

// Overlay files: GeoJSON, GPX, KML and the plist layouts of iOS projects.

extension FuzzTarget {
    static let geojson = FuzzTarget(name: "geojson", input: "a GeoJSON file") { bytes in
        guard let features = try? GeoJSON.parse(Data(bytes)) else { return }
        // What was read must also write back (the server sends features as GeoJSON).
        _ = try? GeoJSON.parse(GeoJSON.encode(features))
    }

    static let gpx = FuzzTarget(name: "gpx", input: "a GPX file") { bytes in
        guard let features = try? GPX.parse(Data(bytes)) else { return }
        play(features)
    }

    static let kml = FuzzTarget(name: "kml", input: "a KML file") { bytes in
        _ = try? KML.parse(Data(bytes))
    }

    static let plist = FuzzTarget(name: "plist", input: "an XML property list (the three shapes: route, boundary, points)") { bytes in
        let data = Data(bytes)
        for shape in [PropertyList.Shape.route, .boundary, .points] {
            _ = try? PropertyList.parse(data, shape: shape, overlayImage: "overlay.png")
        }
    }

    /// Features drawn into a small snapshot fitted to them: what `tilekit snapshot` and the
    /// server's static images do with overlays from a file or a POST body.
    static let snapshot = FuzzTarget(name: "snapshot", input: "a GeoJSON file, drawn into a 64x48 snapshot fitted to it") { bytes in
        guard let features = try? GeoJSON.parse(Data(bytes)), !features.isEmpty, features.count <= 200 else { return }
        var images = [String: RGBAImage]()
        if let tiny = try? RGBAImage(decoding: Scratch.shared.tinyPNG) {
            for feature in features {
                if let name = feature.imageOverlay?.image { images[name] = tiny }
                if let name = feature.style.markerImage { images[name] = tiny }
            }
        }
        var options = SnapshotOptions(region: .fit(padding: 4), width: 64, height: 48, features: features, attribution: "© fuzz")
        options.images = images
        waitFor { [options] in _ = try? await Snapshotter.render(options) }
    }

    /// Plays the first line of a track the way the game does, at a few moments.
    static func play(_ features: [Feature]) {
        for feature in features {
            guard case .lineString(let points) = feature.geometry else { continue }
            let times = feature.trackPoints?.times ?? []
            guard let playback = try? RoutePlayback(points: points, times: times.count == points.count ? times : []) else { continue }
            for fraction in [0.0, 0.25, 0.5, 1.0] { _ = playback.position(atSeconds: playback.durationSeconds * fraction) }
            return
        }
    }
}
