public import TileServer

extension TileServer {
    /// Listens on `host:port` (nil host: every interface) until `stop` is called on the result.
    /// `limits` sets connections and deadlines; the body limit and handler timeout come from
    /// the server's options. The adapter only converts: every answer comes from `fast` or
    /// `handle`.
    public func start(host: String?, port: Int, limits: HTTPServerLimits = HTTPServerLimits()) throws(HTTPServerError) -> HTTPServer {
        var limits = limits
        limits.maxBodyBytes = options.maxBodyBytes
        limits.handlerTimeout = options.requestTimeout
        return try HTTPServer(host: host, port: port, limits: limits,
                              fast: { [self] request in fast(request) }, handler: { [self] request in await handle(request) })
    }
}
