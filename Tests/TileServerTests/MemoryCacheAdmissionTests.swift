import Testing
@testable import TileServer

/// The memory cache's W-TinyLFU policy against the access patterns that defeat a plain LRU.
@Suite struct MemoryCacheAdmissionTests {
    /// Asks for `key` as the server does: a miss is made and set.
    @discardableResult
    func request(_ cache: MemoryCache<Int, Int>, _ key: Int, cost: Int = 4096) -> Bool {
        if cache.get(key) != nil { return true }
        cache.set(key, key, cost: cost)
        return false
    }

    /// Clients cycling through 150 tiles when 100 fit: an LRU evicts each tile just before it
    /// is asked for again, and misses every time. This keeps most of what fits.
    @Test func aCycleThroughMoreThanFitsKeepsHittingWhatFits() {
        let cache = MemoryCache<Int, Int>(capacity: 100 * 4096, shards: 1)
        for _ in 0..<20 { for key in 0..<150 { request(cache, key) } }
        var hits = 0
        for _ in 0..<5 { for key in 0..<150 where request(cache, key) { hits += 1 } }
        #expect(hits >= 5 * 150 / 2, "\(hits) hits of 750")
        #expect(cache.statistics.bytes <= 100 * 4096)
    }

    /// One client walking a large region once (1,000 tiles nobody asks for again) does not
    /// push out the 20 tiles everyone asks for.
    @Test func aScanDoesNotFlushPopularTiles() {
        let cache = MemoryCache<Int, Int>(capacity: 100 * 4096, shards: 1)
        for _ in 0..<10 { for key in 0..<20 { request(cache, key) } }
        for key in 1000..<2000 { request(cache, key) }
        let kept = (0..<20).filter { cache.get($0) != nil }.count
        #expect(kept >= 18, "\(kept) of 20 popular tiles kept")
    }

    /// The window holds the newest entry whatever its count: a tile just made, asked for
    /// again at once (a browser's second request), is there even in a cache full of popular tiles.
    @Test func theNewestTileIsKept() {
        let cache = MemoryCache<Int, Int>(capacity: 100 * 4096, shards: 1)
        for _ in 0..<10 { for key in 0..<100 { request(cache, key) } }
        for key in 500..<520 {
            request(cache, key)
            #expect(cache.get(key) == key)
        }
        #expect(cache.statistics.bytes <= 100 * 4096)
    }

    /// Entries of every size, asked for at random: the bytes never pass the capacity, and
    /// the counts agree with what is there.
    @Test func mixedSizesStayWithinCapacity() {
        let cache = MemoryCache<Int, Int>(capacity: 40 * 4096, shards: 2)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let key = Int.random(in: 0..<300, using: &generator)
            request(cache, key, cost: 1 + key % 7 * 1500)
            #expect(cache.statistics.bytes <= 40 * 4096)
        }
        let stats = cache.statistics
        #expect(stats.entries > 0 && stats.hits > 0)
        #expect((0..<300).filter { cache.get($0, counting: .hitsOnly) != nil }.count == stats.entries)
    }

    /// A first look that counts hits only leaves a miss to be counted once, by `countMiss`
    /// or by a second look.
    @Test func eachRequestCountsOnce() {
        let cache = MemoryCache<Int, Int>(capacity: 100 * 4096, shards: 1)
        cache.set(1, 1, cost: 10)
        #expect(cache.get(1, counting: .hitsOnly) == 1)
        #expect(cache.get(2, counting: .hitsOnly) == nil)
        #expect(cache.statistics.hits == 1 && cache.statistics.misses == 0)
        cache.countMiss(2)
        _ = cache.get(3)
        #expect(cache.statistics.hits == 1 && cache.statistics.misses == 2)
    }

    @Test func theSketchCountsAndForgets() {
        var sketch = FrequencySketch(entries: 16)
        for _ in 0..<5 { sketch.increment(42) }
        #expect(sketch.frequency(42) == 5)
        #expect(sketch.frequency(43) <= 1)
        for _ in 0..<20 { sketch.increment(7) }
        #expect(sketch.frequency(7) == 15, "saturates at 15")
        // 160 requests (10 an entry) halve every counter.
        for _ in 0..<(160 - 25) { sketch.increment(99) }
        #expect(sketch.frequency(42) == 2 && sketch.frequency(7) == 7)
    }
}
