/// One share of a build cut into `count` shards: `index` in `0..<count`, written `I/N`.
///
/// Numbered from 0, as the schedulers that start shards number them: a Kubernetes indexed
/// Job's `JOB_COMPLETION_INDEX`, a Slurm array's `SLURM_ARRAY_TASK_ID` (`--array=0-2`),
/// `seq 0 2 | xargs -P 3`. So three shards are `0/3`, `1/3` and `2/3`.
public struct ShardSpec: Hashable, Sendable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    /// The most shards a build may be cut into: more than any cluster runs at once, few
    /// enough that `index * count` products and per-shard tables stay small.
    public static let maxCount = 100_000

    public init(index: Int, count: Int) throws(TileMathError) {
        let text = "\(index)/\(count)"
        guard (1...Self.maxCount).contains(count) else {
            throw .invalidShard(text, reason: "the shard count \(count) is not in 1-\(Self.maxCount)")
        }
        guard (0..<count).contains(index) else {
            throw .invalidShard(text, reason: "the index \(index) is not in 0-\(count - 1) (shards are numbered from 0: \(Self.example(count)))")
        }
        self.index = index
        self.count = count
    }

    /// Parses `I/N`: two whole numbers in ASCII digits (no sign, no spaces), `I` below `N`.
    public init(parsing text: String) throws(TileMathError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        func number(_ part: Substring) -> Int? {
            // At most 9 digits: `Int(_:)` would also take "+1", and a 40-digit number is no count.
            guard !part.isEmpty, part.count <= 9, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(part)
        }
        guard parts.count == 2, let index = number(parts[0]), let count = number(parts[1]) else {
            throw .invalidShard(text, reason: "not I/N (two whole numbers, numbered from 0: 0/3, 1/3, 2/3)")
        }
        try self.init(index: index, count: count)
    }

    public var description: String { "\(index)/\(count)" }

    static func example(_ count: Int) -> String {
        count <= 3 ? (0..<count).map { "\($0)/\(count)" }.joined(separator: ", ") : "0/\(count) ... \(count - 1)/\(count)"
    }
}
