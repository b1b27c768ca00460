"""Game analysis: a finished game's decisions judged by a searcher's playouts (``judge``), as a report with the
win-probability graph, each player's accuracy and the moves that cost most (``report``); docs/analysis.md."""
