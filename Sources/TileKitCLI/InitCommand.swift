import Foundation
import MapProjects
import TileSources

/// `tilekit init DIR`: a map project made from what the user has (a scan, artwork with its
/// pins and routes, or the points and route of a game), ready for `tilekit serve`.
///
/// Everything is made in a hidden folder beside DIR, checked with the reader `serve` uses,
/// and renamed into place at the end: an error leaves nothing behind.
enum InitCommand: Command {
    static let path = ["init"]
    static let summary = "make a map project from a scan, artwork or a game's points"
    static let options = OptionSpec(valued: ["scan", "art", "corners", "bounds", "crs", "overlay", "pois", "route", "name", "title",
                                             "attribution", "zoom", "base", "user-agent"],
                                    flags: ["quiet"])
    static let help = """
    Usage: tilekit init DIR [--scan IMAGE | --art IMAGE] [--corners TL;TR;BR;BL | --bounds W,S,E,N]
                            [--overlay FILE]... [--pois POINTS.geojson [--route ROUTE.gpx]...]
                            [--base URL --user-agent UA]

    Makes a map project in DIR (a new or empty folder): a map.json that `tilekit serve`
    reads, a README.md beside it saying what each key does, and the data it names. Then it
    prints the command that serves it and the viewer's URL. What you have decides the map:

      a scan          --scan IMAGE placed by --corners, --bounds or a world file beside it:
                      cut into a tile pyramid (scan.mbtiles) laid at 80% over a paper base
      artwork         --art IMAGE pinned by --corners or --bounds (or by the overlay corners
                      of a park plist given with --overlay): an image overlay (art.geojson)
      pins, routes    --overlay FILE, repeatable: GeoJSON, GPX, KML or an iOS plist
                      (annotations, a route, a park's boundary), each a layer of its own
      a game          --pois POINTS.geojson (Point features; those without a "kind" become
                      quests) and --route ROUTE.gpx, repeatable: the points' encounter
                      zones and the routes the viewer plays

    Options:
      --scan IMAGE          PNG, JPEG, WebP or TIFF of a map, cut into tiles
      --art IMAGE           a picture laid on the map as it is (no tiles cut)
      --corners TL;TR;BR;BL the image's corners as LON,LAT each: top-left;top-right;bottom-right;bottom-left
      --bounds W,S,E,N      the image is a plate carrée of this box (degrees)
      --crs 4326|3857       the coordinates of a world file beside the image (default: 4326)
      --overlay FILE        a feature layer (repeatable)
      --pois FILE           the game's points of interest (GeoJSON, or a plist with game kinds)
      --route FILE.gpx      a route the game can play (repeatable; needs --pois)
      --base URL            a base map under everything instead of paper: a tile server's URL
                            template ({z} {x} {y}, cached in cache/base.mbtiles) or a .pmtiles URL
      --user-agent UA       names your app to --base's tile server (required with a template)
      --zoom A-B            the scan's pyramid zooms (default: from one tile to the scan's resolution)
      --name NAME           the map's name in URLs (default: DIR's name)
      --title TEXT, --attribution TEXT
      --quiet               no progress while the pyramid is cut

    Exit 64 for a flag that is missing or wrong (DIR not empty, an image nowhere on the
    map, corners that fold over each other), 65 for a file whose contents are wrong (a
    --pois file without points), 74 when a file cannot be read or written.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 1...1, "DIR")
        let given = arguments.positionals[0]
        let request = try InitRequest(arguments, folder: given)
        let folder = URL(fileURLWithPath: given).standardizedFileURL
        try checkDestination(folder, given: given)

        let parent = folder.deletingLastPathComponent()
        let staging = parent.appendingPathComponent(".\(folder.lastPathComponent).init-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            removeLeftovers(of: folder)
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
        } catch {
            throw CLIError(error, .writing, given)
        }
        var done = false
        defer { if !done { try? FileManager.default.removeItem(at: staging) } }

        let made = try await ProjectMaker(request: request, folder: staging, io: io).make()
        // The reader `serve` and `validate` use: a map init writes always opens.
        do {
            _ = try MapProjectReader.load(staging.appendingPathComponent("map.json"))
        } catch {
            throw .failure("the map.json made for \(given) does not validate (a bug in init):\n\(error.description.replacingOccurrences(of: staging.path, with: given))")
        }
        // rename(2) replaces an empty folder, so `init` into an empty DIR is one step too; a
        // DIR that gained files since checkDestination is left alone (the rename fails).
        do {
            try AtomicFile.rename(staging.path, over: folder.path)
        } catch {
            throw CLIError(error, message: "\(given): \(error.reasonWithoutPath)")  // DIR as given, as every message of init
        }
        done = true

        let shown = given.hasSuffix("/") ? String(given.dropLast()) : given
        io.write("\(shown)/map.json: \(made.summary)")
        io.write("\(shown)/README.md: what each key of map.json does")
        io.write("serve it: tilekit serve \(shown)/map.json")
        io.write("then open http://127.0.0.1:8080/maps/\(request.name)/")
    }

    /// Removes the staging folders of runs that were killed (their process is gone), so an
    /// interrupted init leaves nothing for long; a live run's folder is left alone.
    static func removeLeftovers(of folder: URL) {
        let prefix = ".\(folder.lastPathComponent).init-"
        let parent = folder.deletingLastPathComponent()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? [] where entry.hasPrefix(prefix) {
            guard let pid = Int32(entry.dropFirst(prefix.count)), pid > 0 else { continue }
            if pid == getpid() || (kill(pid, 0) == -1 && errno == ESRCH) {
                try? FileManager.default.removeItem(at: parent.appendingPathComponent(entry))
            }
        }
    }

    /// DIR must be new or an empty folder: init never mixes its files with someone's.
    static func checkDestination(_ folder: URL, given: String) throws(CLIError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) else { return }
        guard isDirectory.boolValue else { throw .usage("\(given): is a file; init makes a new folder (or fills an empty one)") }
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
        guard entries.isEmpty else {
            let sample = entries.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ")
            throw .usage("\(given): the folder is not empty (\(entries.count) entr\(entries.count == 1 ? "y" : "ies"): \(sample)\(entries.count > 3 ? ", ..." : "")); init makes a new folder or fills an empty one")
        }
    }
}
