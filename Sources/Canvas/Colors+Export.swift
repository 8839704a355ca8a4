// `Color` lives in the Colors module (pure Swift, no C library) so that Features, Game and
// anything else that only names colours need not link cairo and Pango. Canvas draws with
// colours in its public API (`Canvas(background:)`, `Paint`, `Text`), so it re-exports them:
// every `import Canvas` keeps seeing `Color` as before the move.
@_exported public import Colors
