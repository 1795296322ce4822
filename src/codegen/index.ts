// IR -> WebAssembly SIMD128: the compiler's public face.

export { compileFunction, type CompileOptions } from './compile.js';
export { instantiate, moduleMeta, type RunFunction } from './instantiate.js';
export { InternalCompileError, MEMORY_MAX_PAGES } from './module.js';
export * from './layout.js';
