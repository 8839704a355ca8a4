import Foundation
import MBTiles

/// `tilekit cache info|clear|prune CACHE`.
enum CacheCommand: Command {
    static let path = ["cache"]
    static let summary = "inspect, clear or prune a remote source's tile cache"
    static let options = OptionSpec(valued: ["max-age", "max-size"])
    static let help = """
    Usage: tilekit cache info CACHE
           tilekit cache clear CACHE
           tilekit cache prune CACHE [--max-age 30d] [--max-size 500MB]

    CACHE is the MBTiles file a cached remote layer keeps (cache@2x.mbtiles beside it holds
    the @2x tiles). info prints JSON (tiles, bytes, expired tiles, oldest and newest fetch);
    clear removes every tile; prune removes tiles fetched longer ago than --max-age, then
    the least recently used until the cache is no larger than --max-size.

    Options:
      --max-age AGE    e.g. 3600s, 90m, 12h, 30d
      --max-size SIZE  e.g. 800KB, 500MB, 2GB (powers of 1024)
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        try expectPositionals(arguments, 2...2, "an action (info, clear, prune) and CACHE")
        let (action, path) = (arguments.positionals[0], arguments.positionals[1])
        guard ["info", "clear", "prune"].contains(action) else { throw .usage("unknown action \"\(action)\": use info, clear or prune") }
        guard FileManager.default.fileExists(atPath: path) else { throw .io("\(path): no such file") }
        do {
            let cache = try TileCacheStore(path: path)
            switch action {
            case "info":
                io.write(CacheInfoReport(try cache.summary()).sortedJSONLine)
            case "clear":
                let before = try cache.summary().tiles
                try cache.clear()
                io.write("\(path): removed \(before) tiles")
            default:
                let maxAge = try arguments.values["max-age"].map { text throws(CLIError) in try Parse.age(text) }
                let maxSize = try arguments.values["max-size"].map { text throws(CLIError) in try Parse.size(text) }
                guard maxAge != nil || maxSize != nil else { throw CLIError.usage("prune needs --max-age or --max-size") }
                let removed = try cache.prune(maxAge: maxAge, maxBytes: maxSize)
                io.write("\(path): removed \(removed) tiles")
            }
        } catch {
            throw CLIError(error, action == "info" ? .reading : .writing, path)
        }
    }
}

extension Parse {
    /// `3600`, `3600s`, `90m`, `12h`, `30d` → a duration. Ages beyond 10^15 s (30 million
    /// years: older than any fetch) are that long, so a huge value cannot trap `Duration`.
    static func age(_ text: String) throws(CLIError) -> Duration {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        let unit = text.last.flatMap { units[$0] }
        guard let value = Double(unit == nil ? text : String(text.dropLast())), value >= 0, value.isFinite else {
            throw .usage("age \"\(text)\" is not a number with s, m, h or d")
        }
        return .seconds(min(value * (unit ?? 1), 1e15))
    }

    /// `1000`, `800KB`, `500MB`, `2GB` → bytes (powers of 1024).
    static func size(_ text: String) throws(CLIError) -> Int {
        let upper = text.uppercased()
        let units: [(String, Double)] = [("KB", 1024), ("MB", 1024 * 1024), ("GB", 1024 * 1024 * 1024), ("B", 1)]
        let unit = units.first { upper.hasSuffix($0.0) }
        guard let value = Double(unit.map { String(upper.dropLast($0.0.count)) } ?? upper), value >= 0,
              let bytes = Int(exactly: (value * (unit?.1 ?? 1)).rounded(.down)) else {
            throw .usage("size \"\(text)\" is not a number with KB, MB or GB, below 8 EB")
        }
        return bytes
    }
}
