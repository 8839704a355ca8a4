import TileMath

/// `--shard I/N` and `--shard-zoom Z`, shared by `pyramid` and `seed`.
struct ShardOptions {
    let spec: ShardSpec
    /// nil: `ShardPlan` chooses the split zoom.
    let splitZoom: Int?

    static let names: Set<String> = ["shard", "shard-zoom"]

    static let help = """
      --shard I/N           build only shard I of N (numbered from 0: 0/3, 1/3, 2/3), for N machines
                            in parallel; `tilekit merge` combines the N stores. Each shard owns whole
                            subtrees below the split zoom (default: the lowest zoom with 8 tiles a shard)
      --shard-zoom Z        the split zoom (within the zooms built)
    """

    /// The options given, or nil without `--shard`; errors are usage (64) naming the value.
    static func parse(_ arguments: BoundArguments) throws(CLIError) -> ShardOptions? {
        guard let text = arguments.values["shard"] else {
            if let zoom = arguments.values["shard-zoom"] { throw .usage("--shard-zoom \(zoom) needs --shard I/N") }
            return nil
        }
        let spec: ShardSpec
        do { spec = try ShardSpec(parsing: text) } catch { throw .usage(error.description) }
        return ShardOptions(spec: spec, splitZoom: try Parse.optionalZoom(arguments.values["shard-zoom"]))
    }
}
