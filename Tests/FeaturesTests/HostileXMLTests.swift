import Foundation
import Testing
import TileMath
import Colors
@testable import Features

/// A committed hostile input (Fixtures/hostile, written by its generate.py).
func hostileFixture(_ name: String) throws -> URL {
    try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/hostile"), "no fixture \(name)")
}

/// The XML inputs of issue 11 that crashed, hung or overflowed Foundation's XMLParser: each
/// is now a FeatureError naming the file and the line, whichever reader gets it.
@Suite struct HostileXMLTests {
    enum Reader: String, CaseIterable, CustomStringConvertible {
        case gpx, kml, plist
        var description: String { rawValue }

        func load(_ url: URL) throws(FeatureError) -> [Feature] {
            switch self {
            case .gpx: return try GPX.load(url)
            case .kml: return try KML.load(url)
            case .plist: return try PropertyList.load(url)
            }
        }
    }

    /// (fixture, where the error is, what it says)
    static let cases: [(String, String, String)] = [
        ("invalid-utf8-comment.xml", "line 1, column 5", "malformed XML: Input is not proper UTF-8"),
        ("pi-without-target.xml", "line 3, column 3", "malformed XML: xmlParsePI : no target name"),
        ("xml-declaration-inside.xml", "line 3, column 8", "malformed XML: XML declaration allowed only at the start of the document"),
        ("bad-start-element.xml", "line 2, column 2", "malformed XML: StartTag: invalid element name"),
        ("duplicate-attribute.xml", "line 2, column 29", "malformed XML: Attribute lat redefined"),
        ("unquoted-attribute.xml", "line 2, column 10", "malformed XML: AttValue: \" or ' expected"),
        ("deep-nesting.xml", "line 1, column 773", "elements nested deeper than 256 levels (TileKit's limit)"),
        ("unclosed.xml", "line 3", "malformed XML: the file ends inside <wpt> (opened at line 3, column 23)"),
        ("empty.xml", "line 1", "malformed XML: no XML element found (the file is empty or is not XML)"),
        ("binary-garbage.xml", "line 1", "malformed XML: no XML element found (the file is empty or is not XML)"),
        ("billion-laughs.gpx", "line 3, column 20", "the document declares the entity \"lol\"; entity declarations are refused"),
        ("external-entity.gpx", "line 3, column 40", "the document declares the entity \"x\"; entity declarations are refused"),
        ("undeclared-entity.plist", "line 5, column 16", "malformed XML: Entity 'lat' not defined"),
    ]

    @Test(arguments: cases, Reader.allCases)
    func hostileFilesAreErrorsNamingTheLine(_ fixture: (String, String, String), reader: Reader) throws {
        let (name, place, reason) = fixture
        let url = try hostileFixture(name)
        do {
            let features = try reader.load(url)
            Issue.record("\(reader) accepted \(name): \(features)")
        } catch {
            #expect(error.file == url.path)
            #expect(error.place == place || error.place.hasPrefix(place + ", "), "\(error)")
            #expect(error.reason.hasPrefix(reason), "\(error)")
        }
    }

    /// A 1 MB "quadratic blowup": one 100 KB entity referenced 9,000 times would expand to
    /// 900 MB. The declaration is refused before any reference is read (the test asserts the
    /// error, not the time it took).
    @Test func entityExpansionIsRefusedAtTheDeclaration() {
        let entity = String(repeating: "a", count: 100_000)
        let document = "<?xml version=\"1.0\"?>\n<!DOCTYPE gpx [<!ENTITY a \"\(entity)\">]>\n<gpx><wpt lat=\"1\" lon=\"2\"><name>"
            + String(repeating: "&a;", count: 9_000) + "</name></wpt></gpx>\n"
        #expect(document.utf8.count > 100_000 + 9_000 * 3)
        #expect(throws: FeatureError(file: "blowup.gpx", place: "line 2, column 100029",
                                     reason: "the document declares the entity \"a\"; entity declarations are refused (they can expand a small file into gigabytes)")) {
            try GPX.parse(Data(document.utf8), file: "blowup.gpx")
        }
    }

    @Test(arguments: [
        // A parameter entity, expanded inside the DTD itself.
        ("<!DOCTYPE gpx [<!ENTITY % p \"<!ENTITY q 'x'>\"> %p;]><gpx/>", "the document declares the entity \"p\""),
        // An entity used only in an attribute value.
        ("<!DOCTYPE gpx [<!ENTITY lat \"1\">]><gpx><wpt lat=\"&lat;\" lon=\"2\"/></gpx>", "the document declares the entity \"lat\""),
        // Undeclared, without a DTD: a fatal error.
        ("<gpx><wpt lat=\"1\" lon=\"2\"><name>&x;</name></wpt></gpx>", "malformed XML: Entity 'x' not defined"),
        // Undeclared in an attribute, with an external DTD libxml2 does not load: still refused.
        ("<!DOCTYPE gpx SYSTEM \"gpx.dtd\"><gpx><wpt lat=\"&x;\" lon=\"2\"/></gpx>", "malformed XML: Entity 'x' not defined"),
        ("<?xml version=\"1.0\" encoding=\"NO-SUCH-ENCODING\"?><gpx/>", "malformed XML: Unsupported encoding NO-SUCH-ENCODING"),
        ("<gpx/><gpx/>", "malformed XML: Extra content at the end of the document"),
    ])
    func entitiesAndEncodings(xml: String, reason: String) {
        do {
            _ = try GPX.parse(Data(xml.utf8), file: "x.gpx")
            Issue.record("accepted: \(xml)")
        } catch {
            #expect(error.file == "x.gpx" && error.place.hasPrefix("line 1"), "\(error)")
            #expect(error.reason.hasPrefix(reason), "\(error)")
        }
    }

    /// 256 levels are read; 257 are refused as the 257th starts (libxml2's push parser
    /// has no limit of its own).
    @Test func theDepthLimitIsExact() throws {
        func nested(_ depth: Int) -> Data {
            Data(("<gpx>" + String(repeating: "<a>", count: depth - 1) + String(repeating: "</a>", count: depth - 1) + "</gpx>").utf8)
        }
        #expect(try GPX.parse(nested(FeatureLimits.xmlDepth)).isEmpty)
        #expect(throws: FeatureError(file: "<data>", place: "line 1, column 773", reason: "elements nested deeper than 256 levels (TileKit's limit)")) {
            try GPX.parse(nested(FeatureLimits.xmlDepth + 1))
        }
    }

    @Test func theElementBudgetIsCounted() throws {
        let xml = Data(("<gpx>" + String(repeating: "<wpt lat=\"1\" lon=\"2\"/>", count: 10) + "</gpx>").utf8)
        #expect(try MarkupReader.parse(xml, file: "w.gpx", maxElements: 11).children.count == 10)
        #expect(throws: FeatureError(file: "w.gpx", place: "line 1, column 224", reason: "more than 10 elements (TileKit's limit)")) {
            try MarkupReader.parse(xml, file: "w.gpx", maxElements: 10)
        }
    }

    /// What Foundation's XMLParser gave good files, libxml2 gives too.
    @Test func goodFilesReadAsBefore() throws {
        let gpx = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx xmlns="http://www.topografix.com/GPX/1/1" xmlns:gpxx="http://www.garmin.com/xmlschemas/GpxExtensions/v3">
          <wpt lat="40.5" lon="-73.5"><name>Tom &amp; Jerry &#x263A;</name><desc><![CDATA[<b>bold</b> & co]]></desc>
            <extensions><gpxx:WaypointExtension/></extensions></wpt>
        </gpx>
        """
        let waypoint = try #require(try GPX.parse(Data(gpx.utf8)).first)
        #expect(waypoint.title == "Tom & Jerry ☺" && waypoint.subtitle == "<b>bold</b> & co")

        // Ampersands in attributes (libxml2 keeps them as "&#38;" without entity substitution).
        let kml = """
        <kml><Document><Style id="a&amp;b&#38;c"><LineStyle><width>3</width></LineStyle></Style>
          <Placemark><gx:unknownPrefix/><styleUrl>#a&amp;b&amp;c</styleUrl><Point><coordinates>1,2</coordinates></Point></Placemark>
        </Document></kml>
        """
        let placemark = try #require(try KML.parse(Data(kml.utf8)).first)
        #expect(placemark.style.strokeWidth == 3)  // the undeclared gx: prefix is not an error, as before

        // Latin-1, as declared; a line number after it.
        var latin1 = Data("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<gpx><wpt lat=\"1\" lon=\"2\"><name>Caf".utf8)
        latin1.append(0xE9)
        latin1.append(contentsOf: Data("</name></wpt>\n<wpt lat=\"x\" lon=\"2\"/></gpx>".utf8))
        #expect(throws: FeatureError(file: "<data>", place: "line 3, column 21", reason: "a point needs numeric lat and lon attributes")) {
            try GPX.parse(latin1)
        }
        latin1 = latin1.prefix(latin1.count - "\n<wpt lat=\"x\" lon=\"2\"/></gpx>".utf8.count) + Data("</gpx>".utf8)
        #expect(try GPX.parse(latin1).first?.title == "Café")

        // UTF-16 with a byte-order mark, as some plist editors write.
        let plist = "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n<plist version=\"1.0\"><array><string>{40.5,-73.5}</string><string>{40.6,-73.4}</string></array></plist>"
        let utf16 = try #require(plist.data(using: .utf16))
        #expect(try PropertyList.parse(utf16).first?.geometry == .lineString([Coordinate(latitude: 40.5, longitude: -73.5), Coordinate(latitude: 40.6, longitude: -73.4)]))
    }

    @Test func binaryPlistsAreAClearError() throws {
        let url = try hostileFixture("binary.plist")
        #expect(throws: FeatureError(file: url.path, place: "line 1", reason: "binary plists are not read; convert it with `plutil -convert xml1`")) {
            try PropertyList.load(url)
        }
    }

    @Test(arguments: [
        ("<kml><Style id=\"s\"><LineStyle><width>inf</width></LineStyle></Style></kml>", "width \"inf\" is not a number of pixels in [0, 1000]"),
        ("<kml><Style id=\"s\"><LineStyle><width>nan</width></LineStyle></Style></kml>", "width \"nan\" is not a number of pixels in [0, 1000]"),
        ("<kml><GroundOverlay><Icon><href>a.png</href></Icon><LatLonBox><north>1</north><south>1</south><east>2</east><west>0</west></LatLonBox></GroundOverlay></kml>",
         "<LatLonBox> has no area"),
        ("<kml><Placemark><Point><coordinates>nan,1</coordinates></Point></Placemark></kml>", "not a finite number"),
        ("<kml><Placemark><Point><coordinates>1e309,1</coordinates></Point></Placemark></kml>", "not a finite number"),
    ])
    func kmlNumbersThatWouldPoisonRendering(xml: String, reason: String) {
        do {
            _ = try KML.parse(Data(xml.utf8), file: "k.kml")
            Issue.record("accepted: \(xml)")
        } catch {
            #expect(error.reason.contains(reason), "\(error)")
        }
    }

    @Test(arguments: [
        ("<gpx><wpt lat=\"1\" lon=\"2\"><ele>nan</ele></wpt></gpx>", "elevation \"nan\" is not a number"),
        ("<gpx><wpt lat=\"1\" lon=\"2\"><ele>-inf</ele></wpt></gpx>", "elevation \"-inf\" is not a number"),
        ("<gpx><wpt lat=\"nan\" lon=\"2\"/></gpx>", "not a finite number"),
        ("<gpx><wpt lat=\"91\" lon=\"2\"/></gpx>", "latitude 91 is out of range"),
        ("<gpx><wpt lat=\"1\" lon=\"1e300\"/></gpx>", "longitude 1e+300 is out of range"),
    ])
    func gpxNumbersThatWouldPoisonRendering(xml: String, reason: String) {
        do {
            _ = try GPX.parse(Data(xml.utf8), file: "g.gpx")
            Issue.record("accepted: \(xml)")
        } catch {
            #expect(error.reason.contains(reason), "\(error)")
        }
    }

    /// A park's overlay image has a computed fourth corner; it must be on the map too.
    @Test func aParkWhoseFourthCornerIsOffTheMapIsRefused() {
        let plist = """
        <plist><dict>
          <key>midCoord</key><string>{80,0}</string>
          <key>overlayTopLeftCoord</key><string>{-80,0}</string>
          <key>overlayTopRightCoord</key><string>{85,10}</string>
          <key>overlayBottomLeftCoord</key><string>{85,0}</string>
          <key>boundary</key><array><string>{0,0}</string><string>{1,0}</string><string>{1,1}</string></array>
        </dict></plist>
        """
        do {
            _ = try PropertyList.parse(Data(plist.utf8), file: "Park.plist", overlayImage: "park.png")
            Issue.record("accepted a corner at latitude 250")
        } catch {
            #expect(error.place.hasPrefix("line 5") && error.reason.contains("fourth corner") && error.reason.contains("latitude 250"), "\(error)")
        }
    }
}
