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

// WGSL's predeclared functions and type aliases: an entry point with such a name makes a call to it
// in the generated code a "cyclic dependency" in Tint.
const WGSL_BUILTINS = `bitcast all any select arrayLength abs acos acosh asin asinh atan atanh atan2 ceil
clamp cos cosh countLeadingZeros countOneBits countTrailingZeros cross degrees determinant distance
dot dot4U8Packed dot4I8Packed exp exp2 extractBits faceForward firstLeadingBit firstTrailingBit
floor fma fract frexp insertBits inverseSqrt ldexp length log log2 max min mix modf normalize pow
quantizeToF16 radians reflect refract reverseBits round saturate sign sin sinh smoothstep sqrt step
tan tanh transpose trunc dpdx dpdxCoarse dpdxFine dpdy dpdyCoarse dpdyFine fwidth fwidthCoarse
fwidthFine textureDimensions textureGather textureGatherCompare textureLoad textureNumLayers
textureNumLevels textureNumSamples textureSample textureSampleBias textureSampleCompare
textureSampleCompareLevel textureSampleGrad textureSampleLevel textureSampleBaseClampToEdge
textureStore atomicLoad atomicStore atomicAdd atomicSub atomicMax atomicMin atomicAnd atomicOr
atomicXor atomicExchange atomicCompareExchangeWeak pack4x8snorm pack4x8unorm pack4xI8 pack4xU8
pack4xI8Clamp pack4xU8Clamp pack2x16snorm pack2x16unorm pack2x16float unpack4x8snorm unpack4x8unorm
unpack4xI8 unpack4xU8 unpack2x16snorm unpack2x16unorm unpack2x16float storageBarrier textureBarrier
workgroupBarrier workgroupUniformLoad subgroupAdd subgroupExclusiveAdd subgroupInclusiveAdd
subgroupAll subgroupAnd subgroupAny subgroupBallot subgroupBroadcast subgroupBroadcastFirst
subgroupElect subgroupMax subgroupMin subgroupMul subgroupExclusiveMul subgroupInclusiveMul
subgroupOr subgroupShuffle subgroupShuffleDown subgroupShuffleUp subgroupShuffleXor subgroupXor
quadBroadcast quadSwapDiagonal quadSwapX quadSwapY
vec2i vec3i vec4i vec2u vec3u vec4u vec2f vec3f vec4f vec2h vec3h vec4h mat2x2f mat2x3f mat2x4f
mat3x2f mat3x3f mat3x4f mat4x2f mat4x3f mat4x4f mat2x2h mat2x3h mat2x4h mat3x2h mat3x3h mat3x4h
mat4x2h mat4x3h mat4x4h texture_storage_1d texture_storage_2d texture_storage_2d_array
texture_storage_3d texture_depth_2d texture_depth_2d_array texture_depth_cube
texture_depth_cube_array texture_depth_multisampled_2d texture_multisampled_2d texture_2d_array
texture_cube texture_cube_array texture_external sampler_comparison`;

const RESERVED = new Set([...WGSL_WORDS.split(/\s+/), ...PTX_WORDS.split(/\s+/)].filter(Boolean));
const BUILTIN_FUNCTIONS = new Set(WGSL_BUILTINS.split(/\s+/).filter(Boolean));

/**
 * Names the backends generate at module scope next to the entry point (WGSL's buf_/wg_/v_/forge_
 * prefixes, the params struct, the entry's builtin arguments; PTX's param_/shared_ symbols).
 */
const GENERATED_ENTRY_NAME =
  /^(?:buf_|wg_|v_|forge_|param_|shared_|ForgeParams$|local_index$|workgroup_id$|num_workgroups$|subgroup_size$)/;

/** Why `name` cannot be an identifier, or undefined when it can. */
export function identifierProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'must be a string';
  if (!IDENTIFIER_PATTERN.test(name)) {
    return `${JSON.stringify(name)} is not an identifier (letters, digits and '_', not starting with a digit)`;
  }
  if (name.length > MAX_IDENTIFIER_LENGTH)
    return `is longer than ${MAX_IDENTIFIER_LENGTH} characters`;
  // A lone '_' is WGSL's phony-assignment token and a PTX syntax error.
  if (name === '_') return `"_" alone is not an identifier in WGSL or PTX`;
  if (name.startsWith('__')) return `${JSON.stringify(name)} starts with '__', which WGSL reserves`;
  if (RESERVED.has(name)) return `${JSON.stringify(name)} is a reserved word of PTX or WGSL`;
  return undefined;
}

/**
 * Why `name` cannot be an entry point: the identifier rules, WGSL builtin function names and names
 * the backends generate. Other names are emitted with a prefix (`v_`, `buf_`…), so only the entry
 * point can shadow a builtin the generated code calls.
 */
export function entryPointProblem(name: unknown): string | undefined {
  const problem = identifierProblem(name);
  if (problem !== undefined) return problem;
  if (BUILTIN_FUNCTIONS.has(name as string))
    return `${JSON.stringify(name)} is a WGSL builtin function name`;
  return GENERATED_ENTRY_NAME.test(name as string)
    ? `${JSON.stringify(name)} collides with names the backends generate (buf_, wg_, v_, forge_, param_, shared_ …)`
    : undefined;
}

/**
 * Whether `name` is a PTX or WGSL reserved word, which identifierProblem rejects as a spec name.
 */
export function isReservedWord(name: string): boolean {
  return RESERVED.has(name) || name === '_';
}
