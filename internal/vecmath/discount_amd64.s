#include "textflag.h"

// func discountUpdateAVX2(d, b, invA, theta, x2, x *float64, params *[3]float64, n int)
TEXT ·discountUpdateAVX2(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ invA+16(FP), R8
	MOVQ theta+24(FP), R9
	MOVQ x2+32(FP), R10
	MOVQ x+40(FP), R11
	MOVQ params+48(FP), DX
	MOVQ n+56(FP), CX
	VBROADCASTSD 0(DX), Y0  // γ
	VBROADCASTSD 8(DX), Y1  // y
	VBROADCASTSD 16(DX), Y2 // λ
	MOVQ $0x3ff0000000000000, AX
	MOVQ AX, X3
	VBROADCASTSD X3, Y3     // 1.0
	XORQ AX, AX

loop:
	VMOVUPD (SI)(AX*8), Y4          // d
	VFMADD213PD (R10)(AX*8), Y0, Y4 // d = γ·d + x2
	VMOVUPD Y4, (SI)(AX*8)
	VMULPD (R11)(AX*8), Y1, Y5      // y·x
	VMOVUPD (DI)(AX*8), Y6          // b
	VFMADD213PD Y5, Y0, Y6          // b = γ·b + y·x
	VMOVUPD Y6, (DI)(AX*8)
	VADDPD Y2, Y4, Y4               // λ + d
	VDIVPD Y4, Y3, Y7               // 1/(λ + d)
	VMOVUPD Y7, (R8)(AX*8)
	VMULPD Y7, Y6, Y6               // θ = b·invA
	VMOVUPD Y6, (R9)(AX*8)
	ADDQ $4, AX
	CMPQ AX, CX
	JL   loop
	VZEROUPPER
	RET
