// Processes a test starts run as a user runs them. node-tap hands each test file its process-info
// loader through NODE_OPTIONS, and every child (and each of its worker threads) would load it too:
// once in CI a CLI child's compile worker then failed to link its own modules. Imported for this
// side effect by the helpers every spawning test uses.

const options = (process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o !== '' && !o.includes('@tapjs/'));
if (options.length > 0) process.env.NODE_OPTIONS = options.join(' ');
else delete process.env.NODE_OPTIONS;
