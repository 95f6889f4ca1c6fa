/** The identifier grammar every name in a spec must match, so no name can inject text into PTX or WGSL. */
export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Kernel ids: lowercase words joined by `-` or `_` (`q8_0-gemv`). */
export const KERNEL_ID_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;

const MAX_IDENTIFIER_LENGTH = 64;

// WGSL keywords, reserved words and predeclared type names (shadowing them is legal but confusing).
const WGSL_WORDS = `alias break case const const_assert continue continuing default diagnostic discard else
enable false fn for if let loop override requires return struct switch true var while
NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await become
binding_array cast catch class co_await co_return co_yield coherent column_major common compile
compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype delete
demote demote_to_helper do dynamic_cast enum explicit export extends extern external fallthrough
filter final finally friend from fxgroup get goto groupshared highp impl implements import inline
instanceof interface layout lowp macro macro_rules match mediump meta mod module move mut mutable
namespace new nil noexcept noinline nointerpolation noperspective null nullptr of operator package
packoffset partition pass patch pixelfragment precise precision premerge priv protected pub public
readonly ref regardless register reinterpret_cast require resource restrict self set shared sizeof
smooth snorm static static_assert static_cast std subroutine super target template this thread_local
throw trait try type typedef typeid typename typeof union unless unorm unsafe unsized use using
varying virtual volatile wgsl where with writeonly yield
bool f16 f32 i32 u32 vec2 vec3 vec4 mat2x2 mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2 mat4x3 mat4x4
array atomic ptr sampler texture_1d texture_2d texture_3d uniform storage workgroup private function
read write read_write`;

// PTX instruction opcodes, state-space and type words, and predefined identifiers.
const PTX_WORDS = `abs activemask add addc alloca and applypriority atom bar barrier bfe bfi bfind bmsk bra
brev brkpt brx call clz cnot copysign cos cp cvt cvta discard div dp2a dp4a elect exit ex2 fence
fma fns getctarank griddepcontrol isspacep istypeof ld ldmatrix ldu lg2 lop3 mad mad24 madc mapa
match max mbarrier membar min mma mov movmatrix mul mul24 multimem nanosleep neg not or pmevent popc
prefetch prefetchu prmt rcp red redux rem ret rsqrt sad selp set setmaxnreg setp shf shfl shl shr
sin slct sqrt st stackrestore stacksave stmatrix sub subc suld suq sured sust szext tanh tex tld4
trap txq vabsdiff vadd vmad vmax vmin vote vset vshl vshr vsub wgmma wmma xor
b8 b16 b32 b64 b128 u8 u16 u64 s8 s16 s32 s64 f64 bf16 pred param global local const shared
entry func reg tex version target address_size
WARP_SZ laneid tid ntid ctaid nctaid warpid nwarpid smid nsmid gridid lanemask_eq lanemask_le
lanemask_lt lanemask_ge lanemask_gt clock clock64 globaltimer`;

const RESERVED = new Set([...WGSL_WORDS.split(/\s+/), ...PTX_WORDS.split(/\s+/)].filter(Boolean));

/** Why `name` cannot be an identifier, or undefined when it can. */
export function identifierProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (!IDENTIFIER_PATTERN.test(name)) {
    return `${JSON.stringify(name)} is not an identifier (letters, digits and '_', not starting with a digit)`;
  }
  if (name.length > MAX_IDENTIFIER_LENGTH)
    return `is longer than ${MAX_IDENTIFIER_LENGTH} characters`;
  if (name.startsWith('__')) return `${JSON.stringify(name)} starts with '__', which WGSL reserves`;
  if (RESERVED.has(name)) return `${JSON.stringify(name)} is a reserved word of PTX or WGSL`;
  return undefined;
}

/**
 * Whether `name` is a PTX or WGSL reserved word, which identifierProblem rejects as a spec name.
 */
export function isReservedWord(name: string): boolean {
  return RESERVED.has(name);
}
