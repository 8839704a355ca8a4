import Synchronization

/// A least-recently-used cache bounded by the bytes of its values, safe to share between
/// threads. Keys are spread over shards, each an LRU with its own lock and an equal part of
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

    public func set(_ key: Key, _ value: Value, cost: Int) { shard(key).set(key, value, cost: cost) }

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
            s.hits += 1
            if s.newest != i {
                s.unlink(i)
                s.pushNewest(i)
            }
            return s.nodes[i].value
        }
    }

    func set(_ key: Key, _ value: Value, cost: Int) {
        guard cost <= capacity else { return }
        state.withLock { s in
            if let i = s.index[key] {
                s.bytes += cost - s.nodes[i].cost
                s.nodes[i].value = value
                s.nodes[i].cost = cost
                s.unlink(i)
                s.pushNewest(i)
            } else {
                let node = Node(key: key, value: value, cost: cost, newer: -1, older: -1)
                let i: Int
                if let reused = s.free.popLast() { s.nodes[reused] = node; i = reused } else { s.nodes.append(node); i = s.nodes.count - 1 }
                s.index[key] = i
                s.bytes += cost
                s.pushNewest(i)
            }
            while s.bytes > capacity, s.oldest >= 0 {
                let victim = s.oldest
                s.unlink(victim)
                s.index[s.nodes[victim].key] = nil
                s.bytes -= s.nodes[victim].cost
                s.nodes[victim].value = nil
                s.free.append(victim)
            }
        }
    }

    var statistics: (entries: Int, bytes: Int, hits: Int, misses: Int) {
        state.withLock { s in (s.index.count, s.bytes, s.hits, s.misses) }
    }
}
