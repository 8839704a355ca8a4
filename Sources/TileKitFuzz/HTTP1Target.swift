import TileSources

extension FuzzTarget {
    /// An upstream's answer as `HTTP1Client` reads it: the first byte sets the size of the
    /// pieces the rest arrives in (1-64 bytes, as a socket might cut it), then the
    /// connection closes. Whatever was read must respect the body limit.
    static let http1 = FuzzTarget(name: "http1", input: "a piece size byte, then an HTTP/1 response") { bytes in
        guard let first = bytes.first else { return }
        let step = Int(first % 64) + 1, limit = 4096
        var response = HTTP1Response(maxBodyBytes: limit)
        let rest = Array(bytes.dropFirst())
        var start = 0
        do throws(HTTP1Response.Failure) {
            while start < rest.count {
                let end = min(rest.count, start + step)
                try response.consume(rest[start..<end])
                start = end
            }
            try response.connectionClosed()
        } catch {
            return
        }
        if response.body.count > limit { fatalError("a body of \(response.body.count) bytes passed the limit of \(limit)") }
        if !response.isComplete { fatalError("a response read to the close is not complete") }
        _ = response.header("Content-Type")
    }
}
