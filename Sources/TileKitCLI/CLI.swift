public enum TileKitCLIPlaceholder {}
