import Foundation
import TileMath
import Canvas
import TileSources

/// A sample map drawn with TileMath and Canvas alone: the south-east corner of Central Park
/// on parchment, with the slippy-map tile grid, a goblin's 10 m encounter zone at the zoo,
/// and a route from the Fifth Avenue subway. It shows the foundation at work until the
/// MapQuest demo replaces it.
enum SampleMap {
    /// The park's four corners (59th St / 110th St at Fifth Avenue and Central Park West).
    static let park = [(-73.9730, 40.7644), (-73.9819, 40.7681), (-73.9582, 40.8006), (-73.9493, 40.7969)]
        .map { Coordinate(latitude: $0.1, longitude: $0.0) }
    static let goblin = Coordinate(latitude: 40.767769, longitude: -73.971870)   // the zoo
    static let subway = Coordinate(latitude: 40.764811, longitude: -73.973347)   // 5 Av/59 St (N R W)
    static let store = Coordinate(latitude: 40.763700, longitude: -73.972700)    // on Fifth Avenue
    static let view = BoundingBox(west: -73.9765, south: 40.7625, east: -73.9680, north: 40.7695)

    static func render(width: Int, height: Int) throws(CanvasError) -> RGBAImage {
        let size = PixelSize(width: Double(width), height: Double(height))
        let zoom = Zoom.fitting(view, in: size)
        let center = view.center.pixel(zoom: zoom)
        let origin = PixelPoint(x: center.x - size.width / 2, y: center.y - size.height / 2)
        func project(_ c: Coordinate) -> PixelPoint {
            let p = c.pixel(zoom: zoom)
            return PixelPoint(x: p.x - origin.x, y: p.y - origin.y)
        }

        let ink = Color(hex: "#4a3520")!
        let canvas = try Canvas(width: width, height: height)
        // Parchment: warm in the middle, browner at the edges.
        canvas.fill(.rectangle(x: 0, y: 0, width: size.width, height: size.height), with: .radialGradient(
            startCenter: PixelPoint(x: size.width / 2, y: size.height / 2), startRadius: 0,
            endCenter: PixelPoint(x: size.width / 2, y: size.height / 2), endRadius: max(size.width, size.height) * 0.75,
            stops: [GradientStop(0, Color(hex: "#f4e8c8")!), GradientStop(0.7, Color(hex: "#e6d2a2")!), GradientStop(1, Color(hex: "#c9a96b")!)]))

        // The park, with an ink outline.
        let parkPath = Path.polygon([park.map(project)])
        canvas.fill(parkPath, with: .color(Color(hex: "#7fa65a")!.withAlpha(0.55)))
        canvas.stroke(parkPath, with: .color(ink), style: StrokeStyle(width: 4, join: .round))

        // The tile grid at the whole zoom below, labelled z/x/y.
        let gridZoom = Int(zoom.rounded(.down))
        let visible = BoundingBox(
            west: Coordinate(pixel: origin, zoom: zoom).longitude,
            south: Coordinate(pixel: PixelPoint(x: origin.x, y: origin.y + size.height), zoom: zoom).latitude,
            east: Coordinate(pixel: PixelPoint(x: origin.x + size.width, y: origin.y), zoom: zoom).longitude,
            north: Coordinate(pixel: origin, zoom: zoom).latitude)
        let gridStyle = StrokeStyle(width: 1.5, dash: [6, 4])
        let labelStyle = TextStyle(font: Font(family: "DejaVu Sans Mono", size: 13), color: ink.withAlpha(0.8),
                                   halo: Halo(color: Color(hex: "#f4e8c8")!, width: 2), anchor: PixelPoint(x: 0, y: 0))
        for range in TileRange.covering(visible, zoom: gridZoom) {
            for tile in range {
                let nw = project(tile.northWest)
                let se = project(Coordinate(latitude: tile.bounds.south, longitude: tile.bounds.east))
                canvas.stroke(.rectangle(x: nw.x, y: nw.y, width: se.x - nw.x, height: se.y - nw.y),
                              with: .color(ink.withAlpha(0.35)), style: gridStyle)
                canvas.drawText(tile.description, at: PixelPoint(x: nw.x + 6, y: nw.y + 4), style: labelStyle)
            }
        }

        // The hero's route, carried as a Google encoded polyline, walked along Fifth Avenue.
        let encoded = EncodedPolyline.encode([subway, Coordinate(latitude: 40.7660, longitude: -73.9721), goblin,
                                              Coordinate(latitude: 40.7652, longitude: -73.9716), store])
        if let route = try? EncodedPolyline.decode(encoded) {
            canvas.stroke(.polyline(route.map(project)), with: .color(Color(hex: "#b3261e")!),
                          style: StrokeStyle(width: 4, cap: .round, join: .round, dash: [10, 8]))
        }

        // The goblin's 10 m encounter zone: a geodesic circle, round in meters.
        let zone = Path.polygon([Geodesy.circle(center: goblin, radius: 10).map(project)])
        canvas.fill(zone, with: .color(Color(hex: "#b3261e")!.withAlpha(0.25)))
        canvas.stroke(zone, with: .color(Color(hex: "#b3261e")!), style: StrokeStyle(width: 2))

        let label = TextStyle(font: Font(family: "DejaVu Serif", size: 18, weight: .bold, italic: true), color: ink,
                              halo: Halo(color: Color(hex: "#f4e8c8")!, width: 3), anchor: PixelPoint(x: 0, y: 0.5))
        for (place, name, color) in [(goblin, "Goblin (10 m zone)", "#b3261e"), (subway, "5 Av/59 St warp", "#fccc0a"), (store, "Store", "#2b6cb0")] {
            let p = project(place)
            canvas.fill(.circle(center: p, radius: 7), with: .color(Color(hex: color)!))
            canvas.stroke(.circle(center: p, radius: 7), with: .color(ink), style: StrokeStyle(width: 2))
            canvas.drawText(name, at: PixelPoint(x: p.x + 14, y: p.y), style: label)
        }

        // Title, scale bar and attribution.
        canvas.drawText("Central Park · the south-east corner", at: PixelPoint(x: size.width / 2, y: 34),
                        style: TextStyle(font: Font(family: "DejaVu Serif", size: 28, weight: .bold), color: ink,
                                         halo: Halo(color: Color(hex: "#f4e8c8")!, width: 4)))
        let metersPerPixel = Zoom.metersPerPixel(latitude: view.center.latitude, zoom: zoom)
        let barPixels = 100 / metersPerPixel
        let barY = size.height - 30
        canvas.stroke(.polyline([PixelPoint(x: 20, y: barY - 6), PixelPoint(x: 20, y: barY), PixelPoint(x: 20 + barPixels, y: barY),
                                 PixelPoint(x: 20 + barPixels, y: barY - 6)]), with: .color(ink), style: StrokeStyle(width: 3))
        canvas.drawText("100 m", at: PixelPoint(x: 20 + barPixels / 2, y: barY - 16), style: TextStyle(font: Font(size: 14), color: ink))
        canvas.drawText(String(format: "zoom %.2f · tile grid z%d · drawn by TileKit", zoom, gridZoom),
                        at: PixelPoint(x: size.width - 10, y: size.height - 10),
                        style: TextStyle(font: Font(size: 12), color: ink, anchor: PixelPoint(x: 1, y: 1)))
        return canvas.makeImage()
    }
}

/// `tilekit sample`: renders the sample map to an image file.
enum SampleMapCommand: Command {
    static let path = ["sample"]
    static let summary = "render a sample map of Central Park to an image"
    static let options = OptionSpec(valued: ["output", "size"], aliases: ["o": "output"])
    static let help = """
    Usage: tilekit sample [-o PATH] [--size WxH]

    Renders a sample map (the south-east corner of Central Park on parchment, with the
    tile grid, a 10 m encounter zone and a route) and prints the path it wrote. The format
    follows the extension: .png, .jpg or .webp.

    Options:
      -o, --output PATH   where to write (default: out/sample-map.png)
      --size WxH          image size in pixels, each 64-4096 (default: 1024x768)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 0...0, "")
        let output = arguments.values["output"] ?? "out/sample-map.png"
        let sizeText = arguments.values["size"] ?? "1024x768"
        let parts = sizeText.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ (64...4096).contains($0) }) else {
            throw .usage("size \"\(sizeText)\" is not WxH with each side 64-4096")
        }
        let ext = URL(fileURLWithPath: output).pathExtension
        guard let format = ImageFormat(name: ext) else {
            throw .usage("output \"\(output)\": extension \".\(ext)\" is not png, jpg or webp")
        }
        do {
            let image = try SampleMap.render(width: parts[0], height: parts[1])
            try AtomicFile.write(try image.encoded(.defaults(for: format)), to: output)
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("\(error)")
        }
        io.write(output)
    }
}
