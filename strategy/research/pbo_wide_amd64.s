//go:build amd64 && !purego

#include "textflag.h"

// The PBO's column kernels (pbo.go's columnScores and count), four rows
// at a time with AVX2. Each row's score is srScore's, operation for
// operation: sum = loS+hiS, sq = loQ+hiQ, nq = returns*sq,
// d = nq - sum*sum, and sum*|sum| / d where d > floor*nq, else -Inf.

DATA lanes<>+0(SB)/8, $0
DATA lanes<>+8(SB)/8, $1
DATA lanes<>+16(SB)/8, $2
DATA lanes<>+24(SB)/8, $3
GLOBL lanes<>(SB), RODATA|NOPTR, $32

DATA fours<>+0(SB)/8, $4
DATA fours<>+8(SB)/8, $4
DATA fours<>+16(SB)/8, $4
DATA fours<>+24(SB)/8, $4
GLOBL fours<>(SB), RODATA|NOPTR, $32

// func columnAVX2(dst, loS, hiS, loQ, hiQ *float64, n int, returns, floor float64, best *[4]float64, at *[4]int64)
TEXT ·columnAVX2(SB), NOSPLIT, $0-80
	MOVQ dst+0(FP), DI
	MOVQ loS+8(FP), SI
	MOVQ hiS+16(FP), R8
	MOVQ loQ+24(FP), R9
	MOVQ hiQ+32(FP), R10
	MOVQ n+40(FP), CX
	SHLQ $3, CX
	VBROADCASTSD returns+48(FP), Y15
	VBROADCASTSD floor+56(FP), Y14
	VPCMPEQQ Y13, Y13, Y13
	VPSRLQ $1, Y13, Y13 // every bit but the sign: |x|
	VPCMPEQQ Y12, Y12, Y12
	VPSLLQ $52, Y12, Y12 // -Inf
	VMOVAPD Y12, Y11 // each lane's best score so far
	VPCMPEQQ Y10, Y10, Y10 // and its row: -1, none
	VMOVDQU lanes<>(SB), Y9 // the rows under way
	VMOVDQU fours<>(SB), Y8
	XORQ AX, AX

column:
	VMOVUPD (SI)(AX*1), Y0
	VADDPD (R8)(AX*1), Y0, Y0 // sum
	VMOVUPD (R9)(AX*1), Y1
	VADDPD (R10)(AX*1), Y1, Y1 // sq
	VMULPD Y15, Y1, Y1 // nq
	VMULPD Y0, Y0, Y2
	VSUBPD Y2, Y1, Y3 // d = nq - sum*sum
	VMULPD Y14, Y1, Y4 // floor*nq
	VCMPPD $0x1e, Y4, Y3, Y5 // d > floor*nq (ordered: false for NaN)
	VANDPD Y13, Y0, Y6
	VMULPD Y6, Y0, Y6 // sum*|sum|
	VDIVPD Y3, Y6, Y6 // / d
	VBLENDVPD Y5, Y6, Y12, Y6 // -Inf where d is noise
	VMOVUPD Y6, (DI)(AX*1)
	VCMPPD $0x1e, Y11, Y6, Y5 // above the lane's best: the first row of a tie keeps it
	VBLENDVPD Y5, Y6, Y11, Y11
	VBLENDVPD Y5, Y9, Y10, Y10
	VPADDQ Y8, Y9, Y9
	ADDQ $32, AX
	CMPQ AX, CX
	JB column

	MOVQ best+64(FP), DX
	VMOVUPD Y11, (DX)
	MOVQ at+72(FP), DX
	VMOVDQU Y10, (DX)
	VZEROUPPER
	RET

// func countAVX2(in, out *float64, n int, wj, wc float64, c *[4][4]int64)
TEXT ·countAVX2(SB), NOSPLIT, $0-48
	MOVQ in+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ n+16(FP), CX
	SHLQ $3, CX
	VBROADCASTSD wj+24(FP), Y0
	VBROADCASTSD wc+32(FP), Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	XORQ AX, AX

count:
	VMOVUPD (DI)(AX*1), Y6 // out
	VMOVUPD (SI)(AX*1), Y7 // in
	VCMPPD $0x11, Y0, Y6, Y8 // out < wj (ordered: false for NaN)
	VPSUBQ Y8, Y2, Y2 // a true lane is -1
	VCMPPD $0x00, Y0, Y6, Y8 // out == wj
	VPSUBQ Y8, Y3, Y3
	VCMPPD $0x11, Y1, Y7, Y8 // in < wc
	VPSUBQ Y8, Y4, Y4
	VCMPPD $0x00, Y1, Y7, Y8 // in == wc
	VPSUBQ Y8, Y5, Y5
	ADDQ $32, AX
	CMPQ AX, CX
	JB count

	MOVQ c+40(FP), DX
	VMOVDQU Y2, (DX)
	VMOVDQU Y3, 32(DX)
	VMOVDQU Y4, 64(DX)
	VMOVDQU Y5, 96(DX)
	VZEROUPPER
	RET
