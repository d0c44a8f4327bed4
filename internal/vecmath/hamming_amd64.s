#include "textflag.h"

// func hammingBlocksAVX512(q *uint64, words int, blocks *uint64, nblocks int, out *uint64)
// For each block of eight word-interleaved sketches: broadcast word j of q, XOR it with word j of
// the eight sketches, count the bits of each lane and add them up; store the eight sums.
TEXT ·hammingBlocksAVX512(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ words+8(FP), CX
	MOVQ blocks+16(FP), DI
	MOVQ nblocks+24(FP), BX
	MOVQ out+32(FP), DX

block:
	VPXORQ Z0, Z0, Z0
	XORQ   R8, R8

word:
	VPBROADCASTQ (SI)(R8*8), Z1
	VPXORQ       (DI), Z1, Z2
	VPOPCNTQ     Z2, Z2
	VPADDQ       Z2, Z0, Z0
	ADDQ         $64, DI
	INCQ         R8
	CMPQ         R8, CX
	JL           word

	VMOVDQU64 Z0, (DX)
	ADDQ      $64, DX
	DECQ      BX
	JNZ       block
	VZEROUPPER
	RET

// func signBitsAVX2(x *float64, words int, dst *uint64)
// Each word: sixteen groups of four doubles, whose sign bits VMOVMSKPD gathers into bits 4g..4g+3.
TEXT ·signBitsAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ words+8(FP), CX
	MOVQ dst+16(FP), DI

signword:
	XORQ DX, DX
	VMOVUPD   0(SI), Y0
	VMOVMSKPD Y0, AX
	ORQ       AX, DX
	VMOVUPD   32(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $4, AX
	ORQ       AX, DX
	VMOVUPD   64(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $8, AX
	ORQ       AX, DX
	VMOVUPD   96(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $12, AX
	ORQ       AX, DX
	VMOVUPD   128(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $16, AX
	ORQ       AX, DX
	VMOVUPD   160(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $20, AX
	ORQ       AX, DX
	VMOVUPD   192(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $24, AX
	ORQ       AX, DX
	VMOVUPD   224(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $28, AX
	ORQ       AX, DX
	VMOVUPD   256(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $32, AX
	ORQ       AX, DX
	VMOVUPD   288(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $36, AX
	ORQ       AX, DX
	VMOVUPD   320(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $40, AX
	ORQ       AX, DX
	VMOVUPD   352(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $44, AX
	ORQ       AX, DX
	VMOVUPD   384(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $48, AX
	ORQ       AX, DX
	VMOVUPD   416(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $52, AX
	ORQ       AX, DX
	VMOVUPD   448(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $56, AX
	ORQ       AX, DX
	VMOVUPD   480(SI), Y0
	VMOVMSKPD Y0, AX
	SHLQ      $60, AX
	ORQ       AX, DX
	MOVQ DX, (DI)
	ADDQ $512, SI
	ADDQ $8, DI
	DECQ CX
	JNZ  signword
	VZEROUPPER
	RET

// Nibble population counts for VPSHUFB, in both 128-bit lanes, and the low-nibble mask.
DATA popcntLUT<>+0(SB)/8, $0x0302020102010100
DATA popcntLUT<>+8(SB)/8, $0x0403030203020201
DATA popcntLUT<>+16(SB)/8, $0x0302020102010100
DATA popcntLUT<>+24(SB)/8, $0x0403030203020201
GLOBL popcntLUT<>(SB), RODATA|NOPTR, $32
DATA nibbleMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibbleMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibbleMask<>(SB), RODATA|NOPTR, $32

// func hammingBlocksAVX2(q *uint64, words int, blocks *uint64, nblocks int, out *uint64)
// As hammingBlocksAVX512, with the population count of each byte looked up per nibble (VPSHUFB)
// and the bytes of each lane summed by VPSADBW against zero.
TEXT ·hammingBlocksAVX2(SB), NOSPLIT, $0-40
	MOVQ    q+0(FP), SI
	MOVQ    words+8(FP), CX
	MOVQ    blocks+16(FP), DI
	MOVQ    nblocks+24(FP), BX
	MOVQ    out+32(FP), DX
	VMOVDQU popcntLUT<>(SB), Y14
	VMOVDQU nibbleMask<>(SB), Y15
	VPXOR   Y13, Y13, Y13

block2:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	XORQ  R8, R8

word2:
	VPBROADCASTQ (SI)(R8*8), Y2
	VPXOR        (DI), Y2, Y3
	VPXOR        32(DI), Y2, Y4
	VPSRLW       $4, Y3, Y5
	VPSRLW       $4, Y4, Y6
	VPAND        Y15, Y3, Y3
	VPAND        Y15, Y4, Y4
	VPAND        Y15, Y5, Y5
	VPAND        Y15, Y6, Y6
	VPSHUFB      Y3, Y14, Y3
	VPSHUFB      Y4, Y14, Y4
	VPSHUFB      Y5, Y14, Y5
	VPSHUFB      Y6, Y14, Y6
	VPADDB       Y3, Y5, Y3
	VPADDB       Y4, Y6, Y4
	VPSADBW      Y13, Y3, Y3
	VPSADBW      Y13, Y4, Y4
	VPADDQ       Y3, Y0, Y0
	VPADDQ       Y4, Y1, Y1
	ADDQ         $64, DI
	INCQ         R8
	CMPQ         R8, CX
	JL           word2

	VMOVDQU Y0, (DX)
	VMOVDQU Y1, 32(DX)
	ADDQ    $64, DX
	DECQ    BX
	JNZ     block2
	VZEROUPPER
	RET
