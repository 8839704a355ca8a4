import TileMath

extension ProjectProblems: CategorizedError {
    /// I/O when every problem is a file that is missing or cannot be read (or a URL that does
    /// not answer); data when any is about what a file says.
    public var exitCategory: ExitCategory { problems.allSatisfy(\.isIO) ? .io : .data }
}
