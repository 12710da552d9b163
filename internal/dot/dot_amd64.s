//go:build !purego

#include "textflag.h"

// The accumulator lives in Y0..Y3 (lanes 0–7, 8–15, 16–23, 24–31). Each
// step multiplies 32 components (VMULPS) and adds the products to the
// lanes (VADDPS): two roundings, as in the portable loop.

// STEP adds the products of the next 32 components of SI and DI to the
// lanes Y0..Y3 and moves SI and DI past them.
#define STEP \
	VMOVUPS 0(SI), Y4 \
	VMOVUPS 32(SI), Y5 \
	VMOVUPS 64(SI), Y6 \
	VMOVUPS 96(SI), Y7 \
	VMULPS  0(DI), Y4, Y4 \
	VMULPS  32(DI), Y5, Y5 \
	VMULPS  64(DI), Y6, Y6 \
	VMULPS  96(DI), Y7, Y7 \
	VADDPS  Y4, Y0, Y0 \
	VADDPS  Y5, Y1, Y1 \
	VADDPS  Y6, Y2, Y2 \
	VADDPS  Y7, Y3, Y3 \
	ADDQ    $128, SI \
	ADDQ    $128, DI

// func addAVX(a, b *float32, n int, acc *Acc)
TEXT ·addAVX(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ acc+24(FP), DX
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	SHRQ $5, CX
	JZ   addstore

addloop:
	STEP
	DECQ CX
	JNZ  addloop

addstore:
	VMOVUPS Y0, 0(DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	VZEROUPPER
	RET

// REDUCE sums the lanes of Y0..Y3 into the low float of X0, by halving:
// lane i += lane i+16, i+8, i+4, i+2, i+1.
#define REDUCE \
	VADDPS       Y2, Y0, Y0 \
	VADDPS       Y3, Y1, Y1 \
	VADDPS       Y1, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0

// func sumAVX(acc *Acc) float32
TEXT ·sumAVX(SB), NOSPLIT, $0-12
	MOVQ    acc+0(FP), DX
	VMOVUPS 0(DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	REDUCE
	VZEROUPPER
	MOVSS   X0, ret+8(FP)
	RET

// func dotAVX(a, b *float32, n int) float32
TEXT ·dotAVX(SB), NOSPLIT, $0-28
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DI
	MOVQ   n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     dotreduce

dotloop:
	STEP
	DECQ CX
	JNZ  dotloop

dotreduce:
	REDUCE
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// IREDUCE sums the int32 lanes of Y0 and Y1 into AX.
#define IREDUCE \
	VPADDD       Y1, Y0, Y0 \
	VEXTRACTI128 $1, Y0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0x4e, X0, X1 \
	VPADDD       X1, X0, X0 \
	VPSHUFD      $0xb1, X0, X1 \
	VPADDD       X1, X0, X0 \
	VMOVD        X0, AX

// func int8AVX2(a, b *int8, n int) int32
// Sixteen components at a time are sign-extended to int16 (VPMOVSXBW) and
// multiplied and added in pairs into eight int32 sums (VPMADDWD).
TEXT ·int8AVX2(SB), NOSPLIT, $0-28
	MOVQ  a+0(FP), SI
	MOVQ  b+8(FP), DI
	MOVQ  n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	SHRQ  $5, CX
	JZ    int8reduce

int8loop:
	VPMOVSXBW 0(SI), Y2
	VPMOVSXBW 0(DI), Y3
	VPMADDWD  Y3, Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y5, Y4, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       int8loop

int8reduce:
	IREDUCE
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// func int8RowsAVX2(q *int16, codes *int8, d, rows int, out *int32)
// For each row in turn, sixteen codes at a time are widened (VPMOVSXBW)
// and multiplied and added in pairs with q, already widened (VPMADDWD):
// SI walks q anew for each row, DI walks the codes on.
TEXT ·int8RowsAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), R8
	MOVQ codes+8(FP), DI
	MOVQ d+16(FP), R9
	MOVQ rows+24(FP), R10
	MOVQ out+32(FP), R11
	SHRQ $5, R9

rowsloop:
	MOVQ  R8, SI
	MOVQ  R9, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

rowsinner:
	VPMOVSXBW 0(DI), Y2
	VPMADDWD  0(SI), Y2, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(DI), Y3
	VPMADDWD  32(SI), Y3, Y3
	VPADDD    Y3, Y1, Y1
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       rowsinner

	IREDUCE
	MOVL         AX, 0(R11)
	ADDQ         $4, R11
	DECQ         R10
	JNZ          rowsloop
	VZEROUPPER
	RET
