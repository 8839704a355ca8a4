import Foundation
import Synchronization
import TileSources

/// Counters for `/metrics`, in Prometheus' text format: requests by route and status, a
/// latency histogram, the memory cache's hits and misses, and upstream errors.
public final class Metrics: Sendable {
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct State {
        var requests = [RouteStatus: Int]()
        var bucketCounts = [Int](repeating: 0, count: Metrics.buckets.count)
        var latencySum = 0.0
        var latencyCount = 0
        var upstreamErrors = 0
        var rendersRefused = 0
    }

    struct RouteStatus: Hashable {
        var route: String
        var status: Int
    }

    /// Counters are kept per shard, chosen by the calling thread, and summed when read:
    /// every request records, and one lock for all made threads queue behind each other.
    private let shards = (0..<16).map { _ in Shard() }

    final class Shard: Sendable {
        let state = Mutex(State())
    }

    public init() {}

    private var shard: Shard {
        shards[Int(UInt(bitPattern: pthread_self().hashValue) % UInt(shards.count))]
    }

    public func record(route: String, status: Int, seconds: Double) {
        shard.state.withLock { s in
            s.requests[RouteStatus(route: route, status: status), default: 0] += 1
            if let i = Metrics.buckets.firstIndex(where: { seconds <= $0 }) { s.bucketCounts[i] += 1 }
            s.latencySum += seconds
            s.latencyCount += 1
        }
    }

    public func upstreamError() {
        shard.state.withLock { $0.upstreamErrors += 1 }
    }

    /// A static image refused because the render budget was spent.
    public func renderRefused() {
        shard.state.withLock { $0.rendersRefused += 1 }
    }

    /// Every shard added up.
    private var total: State {
        var sum = State()
        for shard in shards {
            let s = shard.state.withLock { $0 }
            sum.requests.merge(s.requests, uniquingKeysWith: +)
            for i in sum.bucketCounts.indices { sum.bucketCounts[i] += s.bucketCounts[i] }
            sum.latencySum += s.latencySum
            sum.latencyCount += s.latencyCount
            sum.upstreamErrors += s.upstreamErrors
            sum.rendersRefused += s.rendersRefused
        }
        return sum
    }

    public func text(cache: (entries: Int, bytes: Int, hits: Int, misses: Int)) -> String {
        let s = total
        var out = """
        # HELP tilekit_requests_total HTTP requests by route and status.
        # TYPE tilekit_requests_total counter

        """
        for key in s.requests.keys.sorted(by: { ($0.route, $0.status) < ($1.route, $1.status) }) {
            out += "tilekit_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(s.requests[key]!)\n"
        }
        out += """
        # HELP tilekit_request_duration_seconds Time from a request's arrival to its answer.
        # TYPE tilekit_request_duration_seconds histogram

        """
        var cumulative = 0
        for (bound, count) in zip(Metrics.buckets, s.bucketCounts) {
            cumulative += count
            out += "tilekit_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "tilekit_request_duration_seconds_bucket{le=\"+Inf\"} \(s.latencyCount)\n"
        out += "tilekit_request_duration_seconds_sum \(s.latencySum)\n"
        out += "tilekit_request_duration_seconds_count \(s.latencyCount)\n"
        out += """
        # HELP tilekit_tile_cache_hits_total Tiles answered from the memory cache.
        # TYPE tilekit_tile_cache_hits_total counter
        tilekit_tile_cache_hits_total \(cache.hits)
        # HELP tilekit_tile_cache_misses_total Tiles not in the memory cache (rendered or fetched).
        # TYPE tilekit_tile_cache_misses_total counter
        tilekit_tile_cache_misses_total \(cache.misses)
        # HELP tilekit_tile_cache_bytes Bytes of encoded tiles held in memory.
        # TYPE tilekit_tile_cache_bytes gauge
        tilekit_tile_cache_bytes \(cache.bytes)
        # HELP tilekit_tile_cache_entries Tiles held in memory.
        # TYPE tilekit_tile_cache_entries gauge
        tilekit_tile_cache_entries \(cache.entries)
        # HELP tilekit_upstream_errors_total Tiles that failed or were unavailable upstream.
        # TYPE tilekit_upstream_errors_total counter
        tilekit_upstream_errors_total \(s.upstreamErrors)
        # HELP tilekit_static_renders_refused_total Static images refused because the render budget was spent.
        # TYPE tilekit_static_renders_refused_total counter
        tilekit_static_renders_refused_total \(s.rendersRefused)

        """
        return out
    }
}

extension TileServer {
    /// Each remote layer's bad answers (not a tile, too large, truncated), cut-off fetches and
    /// requests turned away because its host's slots stayed busy.
    func upstreamMetrics() -> String {
        let remotes = order.flatMap { name in maps[name]?.layers.compactMap { layer in layer.remote.map { (name, layer.spec.id, $0.counters) } } ?? [] }
        guard !remotes.isEmpty else { return "" }
        var out = ""
        for (metric, help, value) in [("bad_answers", "Upstream answers that were not good tiles (never cached).", \RemoteCounters.badAnswers),
                                      ("deadlines", "Upstream fetches cut off at their deadline.", \RemoteCounters.deadlines),
                                      ("queue_timeouts", "Requests answered 503 because every slot to the upstream host stayed busy.", \RemoteCounters.queueTimeouts)] {
            out += "# HELP tilekit_upstream_\(metric)_total \(help)\n# TYPE tilekit_upstream_\(metric)_total counter\n"
            for (map, layer, counters) in remotes {
                out += "tilekit_upstream_\(metric)_total{map=\"\(map)\",layer=\"\(layer)\"} \(counters[keyPath: value])\n"
            }
        }
        return out
    }
}
