import Foundation

/// The JSON of `Snapshot.geometryJSON` (`snapshot --geometry`, a static image's `.json` twin and
/// its `X-Snapshot-Geometry` header). Encoded with sorted keys; nil members are left out.
struct SnapshotGeometryReport: Encodable {
    struct Marker: Encodable {
        var lon: Double
        var lat: Double
        var x: Double
        var y: Double
        var title: String?
        var subtitle: String?
        var symbol: String?
    }

    /// A label's text and box in CSS pixels, rounded to 0.01; the angle in degrees, only when rotated.
    struct Label: Encodable {
        var text: String
        var kind: String
        var x: Double
        var y: Double
        var width: Double
        var height: Double
        var angle: Double?
    }

    struct Counts: Encodable {
        var zoom: Double
        var named: Int
        var labelled: Int
        var drawn: Int
    }

    /// longitude, latitude.
    var center: [Double]
    var zoom: Double
    var scale: Int
    var width: Int
    var height: Int
    /// west, south, east, north.
    var bbox: [Double]
    var markers: [Marker]?
    var labels: [Label]?
    var labelCounts: Counts?

    init(_ snapshot: Snapshot, markers withMarkers: Bool) {
        let g = snapshot.geometry, box = g.bounds
        center = [g.center.longitude, g.center.latitude]
        zoom = g.zoom
        scale = g.scale
        width = g.width
        height = g.height
        bbox = [box.west, box.south, box.east, box.north]
        guard withMarkers else { return }
        markers = snapshot.markers.map {
            Marker(lon: $0.coordinate.longitude, lat: $0.coordinate.latitude, x: $0.point.x, y: $0.point.y,
                   title: $0.title, subtitle: $0.subtitle, symbol: $0.symbol)
        }
        labels = snapshot.labels.map(Label.init)
        labelCounts = Counts(zoom: g.zoom, named: snapshot.labelCounts.named, labelled: snapshot.labelCounts.labelled,
                             drawn: snapshot.labels.count)
    }

    var data: Data {
        (try? sortedJSON()) ?? Data("{}".utf8)
    }
}

extension SnapshotGeometryReport.Label {
    init(_ label: SnapshotLabel) {
        func r(_ v: Double) -> Double { (v * 100).rounded() / 100 }
        let box = label.box
        self.init(text: label.text, kind: label.kind.rawValue, x: r(box.minX), y: r(box.minY), width: r(box.width), height: r(box.height),
                  angle: label.angle != 0 ? r(label.angle * 180 / .pi) : nil)
    }
}
