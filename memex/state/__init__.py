"""The state layer (layer 3): the belief graph and the pure reducers that change it.

* :mod:`memex.state.pmap` — the backing map (the only importer of the map library);
* :mod:`memex.state.columns` — score columns kept beside a graph for fast ranking;
* :mod:`memex.state.graph` — :class:`~memex.GraphState` and its indexes;
* :mod:`memex.state.reducer` — ``apply_command``, the memory reducer;
* :mod:`memex.state.transient` — the transient builder that folds many commands at once;
* :mod:`memex.state.lifecycle` — the one lifecycle mechanism intents and tasks share;
* :mod:`memex.state.intent`, :mod:`memex.state.task` — their states and reducers;
* :mod:`memex.state.namespaces` — the namespace registry and its one fold;
* :mod:`memex.state.replay` — replaying commands and envelopes into a state.

Every function here is pure: a command returns a new state, and every state
returned stays valid and readable.
"""
