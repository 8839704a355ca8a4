import Foundation
import Testing
import TileMath
import Colors
@testable import Features

@Suite struct GeoJSONTests {
    let collection = """
    {"type": "FeatureCollection", "features": [
      {"type": "Feature", "id": "goblin", "geometry": {"type": "Point", "coordinates": [-73.971870, 40.767769]},
       "properties": {"title": "Goblin", "description": "at the zoo", "radius": 10, "marker-color": "#b3261e",
                      "marker-symbol": "monster", "marker-size": "large"}},
      {"type": "Feature", "id": 7, "geometry": {"type": "LineString", "coordinates": [[-73.9733, 40.7648], [-73.9721, 40.766]]},
       "properties": {"stroke": "#f00", "stroke-width": 4, "stroke-opacity": 0.5, "stroke-dash": [10, 5]}},
      {"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [
          [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
          [[4, 4], [4, 6], [6, 6], [6, 4], [4, 4]]]},
       "properties": {"fill": "green", "fill-opacity": 0.3, "renderer": "shimmer"}},
      {"type": "Feature", "geometry": {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6], [5, 5]]]]}, "properties": null},
      {"type": "Feature", "geometry": {"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[2, 2], [3, 3, 120]]]}, "properties": {}},
      {"type": "Feature", "geometry": {"type": "MultiPoint", "coordinates": [[1, 2], [3, 4]]}, "properties": {}},
      {"type": "Feature", "geometry": {"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [1, 1]}]}, "properties": {}},
      {"type": "Feature", "geometry": null, "properties": {"image": "park.png", "image-corners": [[-118.60, 34.43], [-118.58, 34.43], [-118.58, 34.42], [-118.60, 34.42]], "image-opacity": 0.8}},
      {"type": "Feature", "geometry": null, "properties": {"image": "schagen1689.jpg", "image-bbox": [-180, -90, 180, 90]}}
    ]}
    """

    @Test func everyGeometryAndStyle() throws {
        let features = try GeoJSON.parse(Data(collection.utf8))
        #expect(features.count == 9)
        let goblin = features[0]
        #expect(goblin.id == "goblin" && goblin.title == "Goblin" && goblin.subtitle == "at the zoo" && goblin.radius == 10)
        #expect(goblin.geometry == .point(Coordinate(latitude: 40.767769, longitude: -73.971870)))
        #expect(goblin.style.markerColor == Color(hex: "#b3261e") && goblin.style.markerSymbol == "monster" && goblin.style.markerSize == .large)
        #expect(features[1].id == "7" && features[1].style.stroke == Color(red: 1, green: 0, blue: 0))
        #expect(features[1].style.strokeWidth == 4 && features[1].style.strokeOpacity == 0.5 && features[1].style.dash == [10, 5])
        guard case .polygon(let rings) = features[2].geometry else { Issue.record("not a polygon"); return }
        #expect(rings.count == 2 && features[2].renderer == "shimmer" && features[2].style.fillOpacity == 0.3)
        #expect(features[2].style.fill == Color(hex: "green"))
        #expect(features[3].properties.isEmpty)
        #expect(features[4].geometry?.coordinates.count == 4)  // the altitude is read and dropped
        #expect(features[8].imageOverlay?.placement == .box(BoundingBox(west: -180, south: -90, east: 180, north: 90)))
        guard case .corners(let tl, _, let br, _) = features[7].imageOverlay?.placement else { Issue.record("no corners"); return }
        #expect(tl == Coordinate(latitude: 34.43, longitude: -118.60) && br == Coordinate(latitude: 34.42, longitude: -118.58))
        #expect(features[7].imageOverlay?.opacity == 0.8)
        #expect(features[0].properties["marker-symbol"] == .string("monster"))
    }

    @Test func bareGeometriesAndSingleFeatures() throws {
        #expect(try GeoJSON.parse(Data(#"{"type":"Point","coordinates":[1,2]}"#.utf8)).first?.geometry == .point(Coordinate(latitude: 2, longitude: 1)))
        #expect(try GeoJSON.parse(Data(#"{"type":"Feature","geometry":null,"properties":{"title":"x"}}"#.utf8)).first?.title == "x")
    }

    /// Broken files: the error names the place in the document.
    @Test(arguments: [
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1]},"properties":{}}]}"#,
         "features[0].geometry.coordinates", "a position is"),
        (#"{"type":"FeatureCollection","features":[{},{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,2],[3,95]]},"properties":{}}]}"#,
         "features[0].type", "expected \"Feature\""),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,2],[3,95]]},"properties":{}}]}"#,
         "features[0].geometry.coordinates[1]", "latitude 95"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]},"properties":{}}]}"#,
         "features[0].geometry.coordinates[0]", "must end where it starts"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Circle","coordinates":[0,0]},"properties":{}}]}"#,
         "features[0].geometry.type", "\"Circle\" is not a GeoJSON geometry type"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"stroke":"reddish"}}]}"#,
         "features[0].properties.stroke", "\"reddish\" is not a colour"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"fill-opacity":2}}]}"#,
         "features[0].properties.fill-opacity", "out of range [0, 1]"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"radius":10}}]}"#,
         "features[0].properties.radius", "needs a Point"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"image":"a.png"}}]}"#,
         "features[0].properties.image", "image-bbox"),
        (#"{"type":"FeatureCollection"}"#, "features", "needs a \"features\" array"),
        (#"[1, 2]"#, "root", "expected a GeoJSON object"),
        ("{\"type\": \"FeatureCollection\",\n \"features\": [}", "line 2, column 15", "not valid JSON"),
    ])
    func brokenFilesNameThePlace(json: String, place: String, reason: String) {
        do {
            _ = try GeoJSON.parse(Data(json.utf8), file: "park.geojson")
            Issue.record("accepted: \(json)")
        } catch {
            #expect(error.file == "park.geojson" && error.place == place, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
            #expect(error.description.hasPrefix("park.geojson: \(place): "))
        }
    }

    @Test func missingFileIsNamed() {
        #expect(throws: FeatureError.self) { try GeoJSON.load(URL(fileURLWithPath: "/nonexistent/pois.geojson")) }
    }
}

/// The bytes `GeoJSON.encode` writes (what the server sends as a layer's features): keys
/// sorted, style written back as simplestyle properties, a feature without geometry as null.
@Test func encodedFeaturesHaveTheirBytes() {
    var styled = Feature(id: "a/1", geometry: .lineString([Coordinate(latitude: 40.5, longitude: -73.25), Coordinate(latitude: 40.75, longitude: -73)]),
                         properties: ["name": .string("Path"), "lanes": .number(2), "tags": .array([.bool(true), .null])], title: "Walk")
    styled.style.stroke = Color(hex: "#336699")
    styled.style.strokeWidth = 3
    let bare = Feature(geometry: nil)
    #expect(String(decoding: GeoJSON.encode([styled, bare]), as: UTF8.self) == ##"{"features":[{"geometry":{"coordinates":[[-73.25,40.5],[-73,40.75]],"type":"LineString"},"id":"a\/1","properties":{"lanes":2,"name":"Path","stroke":"#336699","stroke-width":3,"tags":[true,null],"title":"Walk"},"type":"Feature"},{"geometry":null,"properties":{},"type":"Feature"}],"type":"FeatureCollection"}"##)
}
