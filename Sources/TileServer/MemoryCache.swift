import Synchronization

/// A cache bounded by the bytes of its values, safe to share between threads, whose entries
/// may also expire (a tile whose upstream gave it a max-age). An expired entry is a miss and
/// is dropped when next asked for.
///
/// Eviction is W-TinyLFU (Einziger, Friedman and Manes; Caffeine's policy): new entries
/// enter a small LRU window, and an entry pushed out of the window is admitted to the main
/// LRU only if it has been asked for more often than the entry it would evict. A plain LRU
/// keeps nothing when clients cycle through more tiles than fit (every request a miss), and
/// one client walking a large region flushes the tiles everyone else asks for; the
/// frequency test keeps the popular part of either.
///
/// Keys are spread over shards, each with its own lock and an equal part of the capacity:
/// with one lock, threads preempted while holding it made convoys that cut throughput by
/// two thirds on two cores.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let shards: [CacheShard<Key, Value>]
    public let capacity: Int

    public init(capacity: Int, shards count: Int = 16) {
        self.capacity = capacity
        shards = (0..<count).map { _ in CacheShard(capacity: capacity / count) }
    }

    private func shard(_ hash: Int) -> CacheShard<Key, Value> {
        shards[Int(UInt(bitPattern: hash) % UInt(shards.count))]
    }

    /// What a lookup records, in the frequencies and the hit and miss counts: each request
    /// must count once, whichever of several lookups answers it.
    public enum Counting: Sendable {
        /// The request, hit or miss.
        case request
        /// The request only if it hits (a first lookup that leaves a miss to another, which
        /// counts it: `countMiss`, or a later `.request` lookup).
        case hitsOnly
    }

    /// The value, if present and fresh.
    public func get(_ key: Key, counting: Counting = .request) -> Value? {
        let hash = key.hashValue
        return shard(hash).get(key, hash: hash, counting: counting)
    }

    /// Records a request that missed (after a `.hitsOnly` lookup that found nothing).
    public func countMiss(_ key: Key) {
        let hash = key.hashValue
        shard(hash).countMiss(hash: hash)
    }

    /// Keeps `value` until it is evicted, or until `expiresAt` (nil: no expiry).
    public func set(_ key: Key, _ value: Value, cost: Int, expiresAt: ContinuousClock.Instant? = nil) {
        let hash = key.hashValue
        shard(hash).set(key, hash: hash, value, cost: cost, expiresAt: expiresAt)
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

/// One shard: a window LRU and a main LRU under one lock, every operation O(1) but for an
/// admission that evicts several small entries to make room for a large one.
final class CacheShard<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    struct Node {
        var key: Key
        var hash: Int
        var value: Value?  // nil once evicted, so a free slot holds no bytes
        var cost: Int
        var expiresAt: ContinuousClock.Instant?
        var inWindow: Bool
        var newer: Int  // toward the list's head (most recent); -1: none
        var older: Int
    }

    /// A doubly linked list's ends, through `Node.newer` and `Node.older`.
    struct Ends {
        var newest = -1
        var oldest = -1
        var bytes = 0
        var count = 0
    }

    struct State {
        var index = [Key: Int]()
        var nodes = [Node]()
        var free = [Int]()
        var window = Ends()
        var main = Ends()
        var sketch: FrequencySketch
        var hits = 0
        var misses = 0

        var bytes: Int { window.bytes + main.bytes }

        mutating func unlink(_ i: Int) {
            // The links alone: a copy of the node would retain and release its value's
            // storage on every hit.
            let (inWindow, newer, older, cost) = (nodes[i].inWindow, nodes[i].newer, nodes[i].older, nodes[i].cost)
            var list = inWindow ? window : main
            if newer >= 0 { nodes[newer].older = older } else { list.newest = older }
            if older >= 0 { nodes[older].newer = newer } else { list.oldest = newer }
            list.bytes -= cost
            list.count -= 1
            if inWindow { window = list } else { main = list }
        }

        mutating func pushNewest(_ i: Int, inWindow: Bool) {
            var list = inWindow ? window : main
            nodes[i].inWindow = inWindow
            nodes[i].newer = -1
            nodes[i].older = list.newest
            if list.newest >= 0 { nodes[list.newest].newer = i }
            list.newest = i
            if list.oldest < 0 { list.oldest = i }
            list.bytes += nodes[i].cost
            list.count += 1
            if inWindow { window = list } else { main = list }
        }

        /// Takes an entry out and frees its slot.
        mutating func remove(_ i: Int) {
            unlink(i)
            index[nodes[i].key] = nil
            nodes[i].value = nil
            free.append(i)
        }

        func isExpired(_ i: Int, now: ContinuousClock.Instant) -> Bool {
            nodes[i].expiresAt.map { $0 <= now } ?? false
        }

        /// Moves what the window holds past its share into the main list, each entry there
        /// competing with the oldest entries of main it would push out: they go if it was asked
        /// for more often than each of them (expired ones always go), or else it goes (on a
        /// tie too, so a scan cannot push out what is already kept). Then, if still over (the
        /// newest entry larger than what main can give up), the oldest go.
        mutating func evict(capacity: Int, windowCapacity: Int) {
            let now = ContinuousClock.now
            // The newest entry stays whatever its size: a tile just made is there to be asked for.
            while window.bytes > windowCapacity, window.count > 1 {
                let candidate = window.oldest
                unlink(candidate)
                pushNewest(candidate, inWindow: false)
                guard bytes > capacity else { continue }
                // The victims it needs, oldest first, decided all at once.
                var victims = [Int](), freed = 0, strongest = -1
                var victim = main.oldest
                while bytes - freed > capacity, victim >= 0, victim != candidate {
                    victims.append(victim)
                    freed += nodes[victim].cost
                    if !isExpired(victim, now: now) { strongest = max(strongest, sketch.frequency(nodes[victim].hash)) }
                    victim = nodes[victim].newer
                }
                if bytes - freed <= capacity, sketch.frequency(nodes[candidate].hash) > strongest {
                    for victim in victims { remove(victim) }
                } else {
                    remove(candidate)
                }
            }
            while bytes > capacity {
                remove(main.oldest >= 0 ? main.oldest : window.oldest)
            }
        }
    }

    let capacity: Int
    let windowCapacity: Int
    private let state: Mutex<State>

    /// `capacity` in bytes (the sum of the costs given to `set`); 1% of it is the window.
    init(capacity: Int) {
        self.capacity = capacity
        windowCapacity = capacity / 100
        // Tiles are rarely smaller than 4 KB: the entries the capacity holds, for the sketch.
        state = Mutex(State(sketch: FrequencySketch(entries: capacity / 4096)))
    }

    func get(_ key: Key, hash: Int, counting: MemoryCache<Key, Value>.Counting) -> Value? {
        state.withLock { s in
            guard let i = s.index[key], !s.isExpired(i, now: .now) else {
                if let i = s.index[key] { s.remove(i) }  // expired
                if counting == .request {
                    s.sketch.increment(hash)
                    s.misses += 1
                }
                return nil
            }
            s.sketch.increment(hash)
            s.hits += 1
            let inWindow = s.nodes[i].inWindow
            if (inWindow ? s.window.newest : s.main.newest) != i {
                s.unlink(i)
                s.pushNewest(i, inWindow: inWindow)
            }
            return s.nodes[i].value
        }
    }

    func countMiss(hash: Int) {
        state.withLock { s in
            s.sketch.increment(hash)
            s.misses += 1
        }
    }

    func set(_ key: Key, hash: Int, _ value: Value, cost: Int, expiresAt: ContinuousClock.Instant? = nil) {
        guard cost <= capacity else { return }
        state.withLock { s in
            if let i = s.index[key] {
                let inWindow = s.nodes[i].inWindow
                s.unlink(i)
                s.nodes[i].value = value
                s.nodes[i].cost = cost
                s.nodes[i].expiresAt = expiresAt
                s.pushNewest(i, inWindow: inWindow)
            } else {
                let node = Node(key: key, hash: hash, value: value, cost: cost, expiresAt: expiresAt, inWindow: true, newer: -1, older: -1)
                let i: Int
                if let reused = s.free.popLast() { s.nodes[reused] = node; i = reused } else { s.nodes.append(node); i = s.nodes.count - 1 }
                s.index[key] = i
                s.pushNewest(i, inWindow: true)
            }
            s.evict(capacity: capacity, windowCapacity: windowCapacity)
        }
    }

    var statistics: (entries: Int, bytes: Int, hits: Int, misses: Int) {
        state.withLock { s in (s.index.count, s.bytes, s.hits, s.misses) }
    }
}

/// How often each key was asked for lately, in little memory: a count-min sketch (four rows
/// of counters that saturate at 15; a key's estimate is its least counter), every counter
/// halved after 10 requests an entry the cache holds, so that what was popular an hour ago
/// fades. Sized as Caffeine's: 4 counters a row an entry, so a counter collects about 2.5
/// requests of other keys between halvings and a key asked for once looks like one.
struct FrequencySketch {
    private var counters: [UInt8]
    private let width: Int
    private let sampleSize: Int
    private var requests = 0

    /// `entries`: about how many entries the cache holds (at least 16 are assumed, at most 2^20).
    init(entries: Int) {
        let entries = min(1 << 20, max(16, entries))
        var power = 64
        while power < 4 * entries { power <<= 1 }
        width = power
        sampleSize = 10 * entries
        counters = [UInt8](repeating: 0, count: 4 * power)
    }

    /// The counter of `hash` in `row`: a 64-bit mix of the hash and the row, so the rows
    /// are independent and keys whose hashes differ in a few bits still spread.
    private func slot(_ hash: Int, _ row: Int) -> Int {
        var h = UInt64(bitPattern: Int64(hash)) &+ UInt64(row + 1) &* 0x9E37_79B9_7F4A_7C15
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        return row * width + Int(truncatingIfNeeded: h & UInt64(width - 1))
    }

    mutating func increment(_ hash: Int) {
        for row in 0..<4 {
            let i = slot(hash, row)
            if counters[i] < 15 { counters[i] += 1 }
        }
        requests += 1
        if requests >= sampleSize {
            for i in counters.indices { counters[i] >>= 1 }
            requests /= 2
        }
    }

    func frequency(_ hash: Int) -> Int {
        var least = 15
        for row in 0..<4 { least = min(least, Int(counters[slot(hash, row)])) }
        return least
    }
}
