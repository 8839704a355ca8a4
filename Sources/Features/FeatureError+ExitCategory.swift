import TileMath

extension FeatureError: CategorizedError {
    /// A file that could not be read is I/O; one read and found wrong is data.
    public var exitCategory: ExitCategory { isIO ? .io : .data }
}
