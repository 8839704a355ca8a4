import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// A URLSession for tile requests that bounds each exchange: a total deadline (connect,
/// headers and the whole body: URLSession's own timeout restarts with every byte, so an
/// upstream that drips one byte a second would hold a request for ever) and a limit on
/// the body's bytes (checked on Content-Length and while the body arrives).
///
/// Built on a delegate rather than `URLSession.data(for:)`: that call cancels its task from
/// Swift's cancellation handler, which holds the task's status lock while Foundation waits
/// for its work queue, a lock-order inversion that deadlocked here
/// (swift-corelibs-foundation #5412). Tasks are cancelled from a Dispatch queue instead.
final class UpstreamSession: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `session` is set once in init; `exchanges` is behind its Mutex.

    /// How an exchange ended.
    enum Answer: Sendable {
        case response(HTTPURLResponse, [UInt8])
        /// The deadline passed before the whole body arrived.
        case deadlineExceeded
        /// The body is longer than the limit (by Content-Length, or by what arrived).
        case bodyTooLarge
        /// A network error: refused, reset, DNS, TLS.
        case failed(String)
    }

    private enum Ending { case deadline, tooLarge, cancelled }

    private struct Exchange {
        let task: URLSessionTask
        /// Called once with the answer, on the session's delegate queue.
        let finish: @Sendable (Answer) -> Void
        let maxBytes: Int
        var response: HTTPURLResponse?
        var body = [UInt8]()
        var ending: Ending?
    }

    private var session: URLSession?
    /// Plain http:// requests (see `HTTP1Client`).
    private let plain: HTTP1Client
    private let exchanges = Mutex([Int: Exchange]())
    private let cancelQueue = DispatchQueue(label: "tilekit.upstream.cancel")

    /// `idleLifetime`: how long an idle http:// connection is kept (tests that count
    /// connections keep them longer than a loaded machine may pause them).
    init(configuration: URLSessionConfiguration, idleLifetime: Duration = .seconds(15)) {
        plain = HTTP1Client(idleLifetime: idleLifetime)
        super.init()
        let delegateQueue = OperationQueue()
        delegateQueue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: delegateQueue)
    }

    /// Ends every exchange and lets the session go (the session holds its delegate until then).
    func invalidate() {
        session?.invalidateAndCancel()
        plain.closeIdleConnections()
    }

    /// One request and its whole answer, within `deadline` and `maxBytes`. A cancelled task
    /// gets `.failed` at once; the caller checks cancellation.
    func exchange(_ request: URLRequest, deadline: Duration, maxBytes: Int) async -> Answer {
        if HTTP1Client.handles(request) {
            let exchange = PlainExchange()
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    startPlain(request, deadline: deadline, maxBytes: maxBytes, exchange: exchange) { continuation.resume(returning: $0) }
                }
            } onCancel: {
                exchange.end(.failed("cancelled"))
            }
        }
        guard let session else { return .failed("the session is gone") }
        let task = session.dataTask(with: request)
        let id = task.taskIdentifier
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                start(task, deadline: deadline, maxBytes: maxBytes) { continuation.resume(returning: $0) }
                // Cancelled before the exchange was registered: the handler found nothing to end.
                if Task.isCancelled { cancelQueue.async { [weak self] in self?.end(id, .cancelled) } }
            }
        } onCancel: {
            // Not task.cancel() here: see the type's comment.
            cancelQueue.async { [weak self] in self?.end(id, .cancelled) }
        }
    }

    /// The same exchange for a caller that cannot await (a synchronous walk of a whole
    /// file), blocking its thread until the answer. The answer comes from the session's
    /// delegate queue and the deadline from a Dispatch queue, never from Swift's cooperative
    /// pool: a task's thread blocked here cannot starve the work it waits for.
    func exchangeBlocking(_ request: URLRequest, deadline: Duration, maxBytes: Int) -> Answer {
        let answered = DispatchSemaphore(value: 0)
        let answer = AnswerSlot()
        let finish: @Sendable (Answer) -> Void = { result in
            answer.value.withLock { $0 = result }
            answered.signal()
        }
        if HTTP1Client.handles(request) {
            startPlain(request, deadline: deadline, maxBytes: maxBytes, exchange: PlainExchange(), finish: finish)
        } else {
            guard let session else { return .failed("the session is gone") }
            start(session.dataTask(with: request), deadline: deadline, maxBytes: maxBytes, finish: finish)
        }
        answered.wait()
        return answer.value.withLock { $0 } ?? .failed("no answer")
    }

    private final class AnswerSlot: Sendable {
        let value = Mutex<Answer?>(nil)
    }

    /// An exchange with `HTTP1Client`: its blocking calls on a thread of its own, which ends
    /// by the deadline (every wait on the socket is bounded by it); the cancel queue answers
    /// at the deadline too, should the thread be held up (resolving a name has no timeout).
    /// A redirect to a URL the client does not handle (https) goes on through URLSession
    /// with the time left.
    ///
    /// Not on Dispatch's global queues: on Linux, libdispatch adds a worker about once a
    /// second while its workers are blocked, so exchanges blocked there delayed every queue's
    /// work, their own deadlines included, by seconds under load (seen in the test suite).
    private func startPlain(_ request: URLRequest, deadline: Duration, maxBytes: Int, exchange: PlainExchange,
                            finish: @escaping @Sendable (Answer) -> Void) {
        exchange.start(finish)
        let client = plain, ends = ContinuousClock.now + deadline
        let started = HTTP1Client.startWorker { [weak self] in
            switch client.get(request, deadline: ends, maxBytes: maxBytes, exchange: exchange) {
            case .answer(let answer):
                exchange.end(answer, byWorker: true)
            case .handOff(let url):
                var redirected = request
                redirected.url = url
                guard let self, let session = self.session, !exchange.isEnded, ends > .now else {
                    exchange.end(.deadlineExceeded, byWorker: true)
                    return
                }
                self.start(session.dataTask(with: redirected), deadline: ends - .now, maxBytes: maxBytes) { exchange.end($0, byWorker: true) }
            }
        }
        guard started else {
            exchange.end(.failed("more than \(HTTP1Client.maxWorkers) upstream exchanges in flight"), byWorker: true)
            return
        }
        cancelQueue.asyncAfter(deadline: .now() + deadline.seconds) { exchange.end(.deadlineExceeded) }
    }

    private func start(_ task: URLSessionTask, deadline: Duration, maxBytes: Int, finish: @escaping @Sendable (Answer) -> Void) {
        let id = task.taskIdentifier
        exchanges.withLock { $0[id] = Exchange(task: task, finish: finish, maxBytes: maxBytes) }
        task.resume()
        // Captures only the id: the timer outlives most exchanges, and holds nothing of theirs.
        cancelQueue.asyncAfter(deadline: .now() + deadline.seconds) { [weak self] in self?.end(id, .deadline) }
    }

    /// Cancels an exchange still running, remembering why.
    private func end(_ id: Int, _ why: Ending) {
        let running = exchanges.withLock { exchanges -> URLSessionTask? in
            guard let exchange = exchanges[id], exchange.ending == nil else { return nil }
            exchanges[id]?.ending = why
            return exchange.task
        }
        running?.cancel()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let id = dataTask.taskIdentifier
        let tooLarge = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[id] else { return false }
            exchange.response = response as? HTTPURLResponse
            let tooLarge = response.expectedContentLength > Int64(exchange.maxBytes)
            guard tooLarge, exchange.ending == nil else { exchanges[id] = exchange; return false }
            exchange.ending = .tooLarge
            exchanges[id] = exchange
            return true
        }
        completionHandler(tooLarge ? .cancel : .allow)
        // FoundationNetworking ignores the disposition (its documented bug): cancel for real.
        if tooLarge { cancelQueue.async { dataTask.cancel() } }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let overflowed = exchanges.withLock { exchanges -> Bool in
            guard var exchange = exchanges[id], exchange.ending == nil else { return false }
            exchanges[id] = nil  // appended to a copy that is not shared: no copy-on-write of the body
            guard exchange.body.count + data.count <= exchange.maxBytes else {
                exchange.ending = .tooLarge
                exchange.body = []
                exchanges[id] = exchange
                return true
            }
            exchange.body.append(contentsOf: data)
            exchanges[id] = exchange
            return false
        }
        if overflowed { cancelQueue.async { dataTask.cancel() } }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let answer: Answer
        switch exchange.ending {
        case .deadline?: answer = .deadlineExceeded
        case .tooLarge?: answer = .bodyTooLarge
        case .cancelled?: answer = .failed("cancelled")
        case nil:
            if let error = error as? URLError, error.code == .timedOut {
                answer = .deadlineExceeded  // URLSession's backstop timeout came first
            } else if let error {
                answer = .failed((error as NSError).localizedDescription)
            } else if let response = exchange.response ?? task.response as? HTTPURLResponse {
                answer = .response(response, exchange.body)
            } else {
                answer = .failed("no HTTP response")
            }
        }
        exchange.finish(answer)
    }
}
