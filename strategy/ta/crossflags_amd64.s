//go:build amd64 && !purego

#include "textflag.h"

// CrossFlagsBoth's loop four bars at a time with AVX2. For bar i,
// d0 = a[i]-b[i] and d1 = a[i-1]-b[i-1] (the same subtractions as the
// scalar loop, so the same values); above[i] = d0 > 0 && d1 <= 0 and
// below[i] = d0 < 0 && d1 >= 0, with ordered comparisons (false for NaN).
// Each four-bit mask becomes four bytes of 0 or 1 through bytes<>.

// bytes<>[m] holds bit j of m in byte j.
DATA bytes<>+0(SB)/4, $0x00000000
DATA bytes<>+4(SB)/4, $0x00000001
DATA bytes<>+8(SB)/4, $0x00000100
DATA bytes<>+12(SB)/4, $0x00000101
DATA bytes<>+16(SB)/4, $0x00010000
DATA bytes<>+20(SB)/4, $0x00010001
DATA bytes<>+24(SB)/4, $0x00010100
DATA bytes<>+28(SB)/4, $0x00010101
DATA bytes<>+32(SB)/4, $0x01000000
DATA bytes<>+36(SB)/4, $0x01000001
DATA bytes<>+40(SB)/4, $0x01000100
DATA bytes<>+44(SB)/4, $0x01000101
DATA bytes<>+48(SB)/4, $0x01010000
DATA bytes<>+52(SB)/4, $0x01010001
DATA bytes<>+56(SB)/4, $0x01010100
DATA bytes<>+60(SB)/4, $0x01010101
GLOBL bytes<>(SB), RODATA|NOPTR, $64

// func crossBothAVX2(above, below *bool, a, b *float64, m int)
TEXT ·crossBothAVX2(SB), NOSPLIT, $0-40
	MOVQ above+0(FP), DI
	MOVQ below+8(FP), SI
	MOVQ a+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ m+32(FP), CX
	LEAQ bytes<>(SB), R10
	VXORPD Y15, Y15, Y15 // 0
	XORQ AX, AX

loop:
	VMOVUPD (R8)(AX*8), Y0
	VSUBPD (R9)(AX*8), Y0, Y0 // d0
	VMOVUPD -8(R8)(AX*8), Y1
	VSUBPD -8(R9)(AX*8), Y1, Y1 // d1
	VCMPPD $0x1e, Y15, Y0, Y2 // d0 > 0
	VCMPPD $0x12, Y15, Y1, Y3 // d1 <= 0
	VANDPD Y3, Y2, Y2
	VCMPPD $0x11, Y15, Y0, Y4 // d0 < 0
	VCMPPD $0x1d, Y15, Y1, Y5 // d1 >= 0
	VANDPD Y5, Y4, Y4
	VMOVMSKPD Y2, R11
	VMOVMSKPD Y4, R12
	MOVL (R10)(R11*4), R11
	MOVL (R10)(R12*4), R12
	MOVL R11, (DI)(AX*1)
	MOVL R12, (SI)(AX*1)
	ADDQ $4, AX
	CMPQ AX, CX
	JB loop

	VZEROUPPER
	RET
