import Foundation
import TileMath
import TileSources
import Pyramids

/// `tilekit merge STORE... --out STORE`: stores (or the shards of one build) combined into one.
enum MergeCommand: Command {
    static let path = ["merge"]
    static let summary = "combine stores, or the shards of a sharded pyramid or seed, into one store"
    static let options = OptionSpec(valued: ["out", "on-conflict", "scheme", "source-scheme", "concurrency"],
                                    flags: ["force", "quiet", "json"], aliases: ["o": "out"])
    static let help = """
    Usage: tilekit merge STORE... --out STORE [--on-conflict first|last|error] [--force]

    Combines folders, MBTiles and PMTiles (any mix) into one store, whose kind follows its
    name as in `convert`: .mbtiles, .pmtiles, or a folder. OUT is built beside its name and
    renamed into place at the end: an interrupted merge leaves nothing half-written.

    The shards of one `pyramid --shard` or `seed --shard` build are merged into the store a
    single run makes, tile for tile: every shard must be given, once; each tile must be
    where the build's plan puts it; and the zooms above the shards' split are made here
    from the shards' tiles (the pyramid's averaging). Shards cannot be mixed with other
    stores: merge them first.

    Other stores are copied in the order given. Two different tiles at one address stop
    the merge unless --on-conflict chooses (identical bytes are one tile). Stores of
    different formats (png, jpg, webp) or tile sizes are refused.

    Options:
      -o, --out STORE          the merged store (required)
      --on-conflict RULE       error (default), first (keep the earlier store's tile) or last
      --scheme xyz|tms         row order of an OUT folder (default: xyz)
      --source-scheme xyz|tms  row order of input folders without metadata.json (default: xyz)
      --concurrency N          tiles averaged at once for a sharded pyramid (default: 2)
      --force                  replace OUT if it exists
      --quiet                  no summary line
      --json                   print a summary as JSON

    Exit codes: 64 usage (a missing or repeated shard, a shard beside other stores, OUT
    exists); 65 bad data (different formats or tile sizes, shards of different builds, a
    conflict, a tile where its shard should not have it, a damaged store); 74 I/O.
    """

    static func run(_ arguments: BoundArguments, io: CommandIO) async throws(CLIError) {
        guard !arguments.positionals.isEmpty else { throw .usage("missing STORE... (the stores to merge)") }
        let out = try required(arguments, "out")
        let ruleText = arguments.values["on-conflict"] ?? "error"
        guard let rule = ConflictRule(rawValue: ruleText) else { throw .usage("on-conflict \"\(ruleText)\" is not first, last or error") }
        let scheme = try Parse.scheme(arguments.values["scheme"]) ?? .xyz
        let sourceScheme = try Parse.scheme(arguments.values["source-scheme"])
        let concurrency = try Parse.count(arguments.values["concurrency"] ?? "2", "concurrency", 1...64)
        let kind: TileStoreKind
        do { kind = try TileStoreKind(name: out) } catch { throw .usage(error.description) }
        let outURL = URL(fileURLWithPath: out).standardizedFileURL
        if let same = arguments.positionals.first(where: { URL(fileURLWithPath: $0).standardizedFileURL == outURL }) {
            throw .usage("\(same) is both a store to merge and --out: write the merge elsewhere")
        }
        if FileManager.default.fileExists(atPath: out) && !arguments.flag("force") {
            throw .usage("\(out) exists; use --force to replace it")
        }

        var inputs = [MergeInput]()
        for path in arguments.positionals {
            do {
                inputs.append(try MergeInput.open(path, scheme: sourceScheme))
            } catch {
                throw mapped(error, path)
            }
        }
        let merge: StoreMerge
        do { merge = try StoreMerge(inputs: inputs, rule: rule) } catch { throw mapped(error, out) }
        merge.concurrency = concurrency

        let clock = ContinuousClock(), start = clock.now
        let report: StoreMerge.Report
        do {
            let store = try StagedStore(path: out, kind: kind, scheme: scheme, format: merge.format ?? .png, resume: false, resumable: false)
            do {
                report = try await merge.run(into: store)
            } catch {
                store.discard()  // a merge that stops leaves nothing behind
                throw error
            }
        } catch {
            throw mapped(error, out)
        }
        let seconds = (clock.now - start).seconds
        let total = report.copied + report.made
        if arguments.flag("json") {
            io.write(MergeRunReport(tiles: total, copied: report.copied, made: report.made, identical: report.identical,
                                 conflicts: report.conflicts, seconds: seconds,
                                 shards: merge.record?.shard.count, splitZoom: merge.record?.splitZoom).sortedJSONLine)
        } else if !arguments.flag("quiet") {
            var line = "\(out): \(total) tiles (\(kind.rawValue))"
            if let record = merge.record {
                line += " from \(record.shard.count) shards of a \(record.command.rawValue)"
                if report.made > 0 { line += ", zooms \(record.zooms.lowerBound)-\(record.splitZoom) made from zoom \(record.splitZoom)" }
            } else {
                line += " from \(inputs.count) stores"
                if report.identical > 0 { line += ", \(report.identical) identical duplicates kept once" }
                if report.conflicts > 0 { line += ", \(report.conflicts) conflicts settled by --on-conflict \(rule.rawValue)" }
            }
            io.write(line + String(format: ", %.1f s", seconds))
        }
    }

    /// Merge failures as exits: a tile address read from a store is data (65), since it came
    /// from the file; the rest by the categories their modules declare (`CLIError`'s mapping).
    static func mapped(_ error: any Error, _ file: String) -> CLIError {
        switch error {
        case let error as TileMathError: return .data("\(file): \(error.description)")
        default: return CLIError(error, .writing, file)
        }
    }
}
