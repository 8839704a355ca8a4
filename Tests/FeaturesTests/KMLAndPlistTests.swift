import Foundation
import Testing
import TileMath
import Colors
@testable import Features

@Suite struct KMLTests {
    let kml = """
    <?xml version="1.0" encoding="UTF-8"?>
    <kml xmlns="http://www.opengis.net/kml/2.2"><Document>
      <Style id="route"><LineStyle><color>ff0000ff</color><width>4</width></LineStyle></Style>
      <Style id="lake"><PolyStyle><color>7fff0000</color></PolyStyle><LineStyle><color>ff000000</color></LineStyle></Style>
      <StyleMap id="lakeMap"><Pair><key>normal</key><styleUrl>#lake</styleUrl></Pair><Pair><key>highlight</key><styleUrl>#route</styleUrl></Pair></StyleMap>
      <Placemark><name>Goblin</name><description>at the zoo</description><Point><coordinates>-73.971870,40.767769,0</coordinates></Point></Placemark>
      <Placemark><name>Route</name><styleUrl>#route</styleUrl><LineString><coordinates>
        -73.9733,40.7648 -73.9721,40.7660
        -73.9718,40.7677</coordinates></LineString></Placemark>
      <Placemark><name>Reservoir</name><styleUrl>#lakeMap</styleUrl><Polygon>
        <outerBoundaryIs><LinearRing><coordinates>0,0 10,0 10,10 0,10 0,0</coordinates></LinearRing></outerBoundaryIs>
        <innerBoundaryIs><LinearRing><coordinates>4,4 6,4 6,6 4,6</coordinates></LinearRing></innerBoundaryIs>
      </Polygon></Placemark>
      <GroundOverlay><name>Schagen 1689</name><color>b3ffffff</color><Icon><href>schagen1689.jpg</href></Icon>
        <LatLonBox><north>85</north><south>-85</south><east>180</east><west>-180</west></LatLonBox></GroundOverlay>
    </Document></kml>
    """

    @Test func placemarksStylesAndGroundOverlays() throws {
        let features = try KML.parse(Data(kml.utf8))
        #expect(features.count == 4)
        #expect(features[0].title == "Goblin" && features[0].subtitle == "at the zoo")
        #expect(features[0].geometry == .point(Coordinate(latitude: 40.767769, longitude: -73.971870)))
        guard case .lineString(let line) = features[1].geometry else { Issue.record("no line"); return }
        #expect(line.count == 3)
        // aabbggrr: ff0000ff is opaque red.
        #expect(features[1].style.stroke == Color(red: 1, green: 0, blue: 0) && features[1].style.strokeWidth == 4)
        guard case .polygon(let rings) = features[2].geometry else { Issue.record("no polygon"); return }
        #expect(rings.count == 2 && rings[1].first == rings[1].last)  // the open inner ring is closed
        // The StyleMap's normal style: 7fff0000 is blue at alpha 127.
        #expect(features[2].style.fill == Color(red: 0, green: 0, blue: 1) && abs((features[2].style.fillOpacity ?? 0) - 127.0 / 255) < 1e-9)
        #expect(features[3].imageOverlay == ImageOverlay(image: "schagen1689.jpg", placement: .box(BoundingBox(west: -180, south: -85, east: 180, north: 85)), opacity: 179.0 / 255))
    }

    @Test(arguments: [
        ("<kml><Placemark><Point><coordinates>1,95</coordinates></Point></Placemark></kml>", "latitude 95"),
        ("<kml><Placemark>\n<styleUrl>#missing</styleUrl></Placemark></kml>", "no Style or StyleMap with id \"missing\""),
        ("<kml><Placemark><LineString><coordinates>1,2</coordinates></LineString></Placemark></kml>", "at least 2"),
        ("<kml><Style id=\"s\"><LineStyle><color>red</color></LineStyle></Style></kml>", "aabbggrr"),
        ("<kml><GroundOverlay><Icon><href>a.png</href></Icon><LatLonBox><north>1</north></LatLonBox></GroundOverlay></kml>", "numeric <west>"),
        ("<gpx/>", "not a KML file"),
        ("<kml><Placemark></kml>", "malformed XML"),
    ])
    func brokenFilesNameTheLine(xml: String, reason: String) {
        do {
            _ = try KML.parse(Data(xml.utf8), file: "park.kml")
            Issue.record("accepted: \(xml)")
        } catch {
            #expect(error.file == "park.kml" && error.place.hasPrefix("line "), "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }
}

@Suite struct PropertyListTests {
    func plist(_ body: String) -> Data {
        Data("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        \(body)
        </plist>
        """.utf8)
    }

    @Test func attractionsRoutesAndParks() throws {
        let attractions = try PropertyList.parse(plist("""
        <array>
          <dict><key>name</key><string>Goliath</string><key>subtitle</key><string>Intense roller coaster</string>
                <key>type</key><string>1</string><key>location</key><string>{34.42469,-118.59653}</string></dict>
          <dict><key>name</key><string>First Aid</string><key>type</key><string>3</string><key>location</key><string>{34.4248, -118.5971}</string></dict>
        </array>
        """))
        #expect(attractions.count == 2 && attractions[0].title == "Goliath" && attractions[0].subtitle == "Intense roller coaster")
        #expect(attractions[0].geometry == .point(Coordinate(latitude: 34.42469, longitude: -118.59653)))
        #expect(attractions[1].properties["type"] == .string("3") && attractions[1].style.markerSymbol == "3")

        let coordinates = plist("<array><string>{34.4248,-118.5971}</string><string>{34.4250,-118.5960}</string><string>{34.4240,-118.5950}</string></array>")
        #expect(try PropertyList.parse(coordinates).first?.geometry?.coordinates.count == 3)
        guard case .polygon(let rings) = try PropertyList.parse(coordinates, shape: .boundary).first?.geometry else { Issue.record("no boundary"); return }
        #expect(rings[0].count == 4 && rings[0].first == rings[0].last)
        guard case .multiPoint = try PropertyList.parse(coordinates, shape: .points).first?.geometry else { Issue.record("no points"); return }

        let park = try PropertyList.parse(plist("""
        <dict>
          <key>midCoord</key><string>{34.4248,-118.5971}</string>
          <key>overlayTopLeftCoord</key><string>{34.4313,-118.6010}</string>
          <key>overlayTopRightCoord</key><string>{34.4313,-118.5893}</string>
          <key>overlayBottomLeftCoord</key><string>{34.4183,-118.6010}</string>
          <key>boundary</key><array><string>{34.4311,-118.5998}</string><string>{34.4304,-118.5911}</string><string>{34.4189,-118.5920}</string></array>
        </dict>
        """), file: "MagicMountain.plist", overlayImage: "overlay_park.png")
        #expect(park.count == 2 && park[0].title == "MagicMountain")
        guard case .corners(_, _, let bottomRight, _) = park[1].imageOverlay?.placement else { Issue.record("no overlay"); return }
        #expect(abs(bottomRight.latitude - 34.4183) < 1e-9 && abs(bottomRight.longitude - -118.5893) < 1e-9)
    }

    @Test func brokenPlistsNameTheLine() {
        let cases: [(Data, String, String)] = [
            (plist("<array>\n<string>{34.4,north}</string></array>"), "line 5", "not a \"{latitude,longitude}\""),
            (plist("<array><dict><key>name</key><string>x</string></dict></array>"), "line 4", "needs a \"location\""),
            (plist("<dict><key>midCoord</key><string>{1,2}</string></dict>"), "line 4", "needs \"overlayTopLeftCoord\""),
            (plist("<array><string>{95,1}</string><string>{1,1}</string></array>"), "line 4", "latitude 95"),
            (Data("bplist00".utf8), "line 1", "binary plists"),
            (plist("<array><string>{1,1}</string>"), "line", "malformed XML"),
        ]
        for (data, line, reason) in cases {
            do {
                _ = try PropertyList.parse(data, file: "Attractions.plist")
                Issue.record("accepted: \(String(decoding: data, as: UTF8.self))")
            } catch {
                #expect(error.file == "Attractions.plist" && error.place.hasPrefix(line), "\(error)")
                #expect(error.reason.contains(reason), "\(error)")
            }
        }
    }
}
