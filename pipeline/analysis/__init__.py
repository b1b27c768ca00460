"""Game analysis: a finished game's decisions judged by a searcher's playouts, as a report (docs/analysis.md)."""
