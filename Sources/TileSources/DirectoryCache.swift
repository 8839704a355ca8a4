import Synchronization
import PMTiles

/// Parsed PMTiles directories kept in memory, bounded by their bytes, the least recently
/// used dropped first. Past the budget, the oldest go until a quarter of it is free: the
/// sort this takes is paid once per many inserts, and reads stay one dictionary lookup.
/// (TileServer's `MemoryCache` is a sharded W-TinyLFU cache for tiles; it lives above this
/// module, and directories are few and large, so this simpler form is enough here.)
final class DirectoryCache<Key: Hashable & Sendable>: Sendable {
    private struct Entry {
        var entries: [PMTilesEntry]
        var cost: Int
        var lastUse: UInt64
    }

    private struct State {
        var entries = [Key: Entry]()
        var bytes = 0
        var clock: UInt64 = 0
    }

    /// The most bytes kept, counted as the entries' memory (24 bytes each) plus 64 a directory.
    let budget: Int
    private let state = Mutex(State())

    init(budget: Int) {
        self.budget = max(0, budget)
    }

    static func cost(_ entries: [PMTilesEntry]) -> Int {
        // Directories hold at most PMTilesLimits.directoryEntries (2^21): no overflow.
        entries.count * MemoryLayout<PMTilesEntry>.stride + 64
    }

    func get(_ key: Key) -> [PMTilesEntry]? {
        state.withLock { state in
            guard state.entries[key] != nil else { return nil }
            state.clock += 1
            state.entries[key]?.lastUse = state.clock
            return state.entries[key]?.entries
        }
    }

    /// Keeps a directory unless it alone is larger than the budget.
    func set(_ key: Key, _ entries: [PMTilesEntry]) {
        let cost = Self.cost(entries)
        guard cost <= budget else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(entries: entries, cost: cost, lastUse: state.clock), forKey: key) {
                state.bytes -= old.cost
            }
            state.bytes += cost
            guard state.bytes > budget else { return }
            let target = budget - budget / 4
            for (oldKey, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.bytes > target else { break }
                state.entries[oldKey] = nil
                state.bytes -= entry.cost
            }
        }
    }

    func removeAll() {
        state.withLock { $0 = State() }
    }

    var statistics: (directories: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }
}
