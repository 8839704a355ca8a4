extension Duration {
    /// The duration in seconds, as a Double (what HTTP's delta-seconds and the cache's
    /// `fetched_at` arithmetic count in).
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// A point in time as seconds since 1970-01-01 00:00 UTC (Unix time): what HTTP dates, a
/// tile's expiry and the tile cache's `fetched_at`/`expires` columns count in. A name for the
/// unit, so a signature says which of a span and an instant a `Double` is.
public typealias EpochSeconds = Double
