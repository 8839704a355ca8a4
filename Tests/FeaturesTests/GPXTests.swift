import Foundation
import Testing
import TileMath
@testable import Features

@Suite struct GPXTests {
    let gpx = """
    <?xml version="1.0" encoding="UTF-8"?>
    <gpx version="1.1" creator="TileKit tests" xmlns="http://www.topografix.com/GPX/1/1">
      <wpt lat="40.767769" lon="-73.971870"><ele>30.5</ele><time>2026-11-29T10:00:00Z</time><name>Goblin</name><desc>the zoo</desc><sym>monster</sym></wpt>
      <rte><name>Game Test</name>
        <rtept lat="40.764811" lon="-73.973347"><name>5 Av/59 St</name></rtept>
        <rtept lat="40.767769" lon="-73.971870"/>
      </rte>
      <trk><name>Walk</name><desc>recorded</desc>
        <trkseg>
          <trkpt lat="40.7648" lon="-73.9733"><ele>20</ele><time>2026-11-29T10:00:00Z</time></trkpt>
          <trkpt lat="40.7660" lon="-73.9721"><ele>21.5</ele><time>2026-11-29T10:01:30.5Z</time></trkpt>
        </trkseg>
        <trkseg>
          <trkpt lat="40.7677" lon="-73.9718"><time>2026-11-29T10:05:00Z</time></trkpt>
        </trkseg>
      </trk>
    </gpx>
    """

    @Test func waypointsRoutesAndTracks() throws {
        let features = try GPX.parse(Data(gpx.utf8))
        #expect(features.count == 3)
        let waypoint = features[0]
        #expect(waypoint.geometry == .point(Coordinate(latitude: 40.767769, longitude: -73.971870)))
        #expect(waypoint.title == "Goblin" && waypoint.subtitle == "the zoo" && waypoint.style.markerSymbol == "monster")
        #expect(waypoint.trackPoints?.elevations == [30.5])
        let route = features[1]
        #expect(route.title == "Game Test")  // not the route point's name
        guard case .lineString(let line) = route.geometry else { Issue.record("route is not a line"); return }
        #expect(line.count == 2)
        let track = features[2]
        guard case .multiLineString(let segments) = track.geometry else { Issue.record("track is not a multiline"); return }
        #expect(segments.map(\.count) == [2, 1] && track.title == "Walk" && track.subtitle == "recorded")
        #expect(track.trackPoints?.elevations == [20, 21.5, nil])
        let times = track.trackPoints!.times.compactMap { $0?.timeIntervalSince1970 }
        #expect(times.count == 3 && abs(times[1] - times[0] - 90.5) < 0.001 && times[2] - times[0] == 300)
    }

    /// Times without a zone are UTC (gpxpy's test files have them); offsets are honoured.
    @Test func timesWithoutAZoneAreUTC() {
        #expect(GPX.date("2013-01-01T12:00:04")?.timeIntervalSince1970 == 1_357_041_604)
        #expect(GPX.date("2013-01-01T12:00:04Z")?.timeIntervalSince1970 == 1_357_041_604)
        #expect(GPX.date("2013-01-01T14:00:04+02:00")?.timeIntervalSince1970 == 1_357_041_604)
        #expect(GPX.date("2013-01-01T12:00:04.250Z")?.timeIntervalSince1970 == 1_357_041_604.25)
        #expect(GPX.date("noon") == nil)
    }

    @Test(arguments: [
        ("<gpx><wpt lat=\"95\" lon=\"1\"/></gpx>", "line 1", "latitude 95"),
        ("<gpx>\n<trk><trkseg>\n  <trkpt lon=\"1\"/></trkseg></trk></gpx>", "line 3", "lat and lon"),
        ("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"1\"><time>yesterday</time></trkpt></trkseg></trk></gpx>", "line 1", "not ISO 8601"),
        ("<gpx><wpt lat=\"1\" lon=\"1\">\n<ele>high</ele></wpt></gpx>", "line 2", "not a number"),
        ("<gpx><wpt lat=\"1\" lon=\"1\"></gpx>", "line 1", "malformed XML"),
        ("<kml></kml>", "line 1", "not a GPX file"),
    ])
    func brokenFilesNameTheLine(xml: String, line: String, reason: String) {
        do {
            _ = try GPX.parse(Data(xml.utf8), file: "route.gpx")
            Issue.record("accepted: \(xml)")
        } catch {
            #expect(error.file == "route.gpx" && error.place.hasPrefix(line + ", column") || error.place == line, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }
}
