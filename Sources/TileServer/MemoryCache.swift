import Synchronization

/// A least-recently-used cache bounded by the bytes of its values, safe to share between
/// threads, whose entries may also expire (a tile whose upstream gave it a max-age).
/// An expired entry is a miss and is dropped when next asked for. Keys are spread over shards, each an LRU with its own lock and an equal part of
/// the capacity: with one lock, threads preempted while holding it made convoys that cut
/// throughput by two thirds on two cores.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let shards: [LRUShard<Key, Value>]
    public let capacity: Int

    public init(capacity: Int, shards count: Int = 16) {
        self.capacity = capacity
        shards = (0..<count).map { _ in LRUShard(capacity: capacity / count) }
    }

    private func shard(_ key: Key) -> LRUShard<Key, Value> {
        shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    public func get(_ key: Key) -> Value? { shard(key).get(key) }

    /// Keeps `value` until it is evicted, or until `expiresAt` (nil: no expiry).
    public func set(_ key: Key, _ value: Value, cost: Int, expiresAt: ContinuousClock.Instant? = nil) {
        shard(key).set(key, value, cost: cost, expiresAt: expiresAt)
    }

    public var statistics: (entries: Int, bytes: Int, hits: Int, misses: Int) {
        var sum = (entries: 0, bytes: 0, hits: 0, misses: 0)
        for shard in shards {
            let s = shard.statistics
            sum.entries += s.entries
            sum.bytes += s.bytes
            sum.hits += s.hits
            sum.misses += s.misses
        }
        return sum
    }
}

/// One shard: an LRU under one lock, every operation O(1).
final class LRUShard<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    struct Node {
        var key: Key
        var value: Value?  // nil once evicted, so a free slot holds no bytes
        var cost: Int
        var expiresAt: ContinuousClock.Instant?
        var newer: Int  // toward the head (most recent); -1: none
        var older: Int
    }

    struct State {
        var index = [Key: Int]()
        var nodes = [Node]()
        var free = [Int]()
        var newest = -1
        var oldest = -1
        var bytes = 0
        var hits = 0
        var misses = 0

        mutating func unlink(_ i: Int) {
            let node = nodes[i]
            if node.newer >= 0 { nodes[node.newer].older = node.older } else { newest = node.older }
            if node.older >= 0 { nodes[node.older].newer = node.newer } else { oldest = node.newer }
        }

        /// Takes an entry out and frees its slot.
        mutating func remove(_ i: Int) {
            unlink(i)
            index[nodes[i].key] = nil
            bytes -= nodes[i].cost
            nodes[i].value = nil
            free.append(i)
        }

        mutating func pushNewest(_ i: Int) {
            nodes[i].newer = -1
            nodes[i].older = newest
            if newest >= 0 { nodes[newest].newer = i }
            newest = i
            if oldest < 0 { oldest = i }
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    /// `capacity` in bytes (the sum of the costs given to `set`).
    init(capacity: Int) {
        self.capacity = capacity
    }

    func get(_ key: Key) -> Value? {
        state.withLock { s in
            guard let i = s.index[key] else { s.misses += 1; return nil }
            if let expiresAt = s.nodes[i].expiresAt, expiresAt <= .now {
                s.remove(i)
                s.misses += 1
                return nil
            }
            s.hits += 1
            if s.newest != i {
                s.unlink(i)
                s.pushNewest(i)
            }
            return s.nodes[i].value
        }
    }

    func set(_ key: Key, _ value: Value, cost: Int, expiresAt: ContinuousClock.Instant? = nil) {
        guard cost <= capacity else { return }
        state.withLock { s in
            if let i = s.index[key] {
                s.bytes += cost - s.nodes[i].cost
                s.nodes[i].value = value
                s.nodes[i].cost = cost
                s.nodes[i].expiresAt = expiresAt
                s.unlink(i)
                s.pushNewest(i)
            } else {
                let node = Node(key: key, value: value, cost: cost, expiresAt: expiresAt, newer: -1, older: -1)
                let i: Int
                if let reused = s.free.popLast() { s.nodes[reused] = node; i = reused } else { s.nodes.append(node); i = s.nodes.count - 1 }
                s.index[key] = i
                s.bytes += cost
                s.pushNewest(i)
            }
            while s.bytes > capacity, s.oldest >= 0 { s.remove(s.oldest) }
        }
    }

    var statistics: (entries: Int, bytes: Int, hits: Int, misses: Int) {
        state.withLock { s in (s.index.count, s.bytes, s.hits, s.misses) }
    }
}
