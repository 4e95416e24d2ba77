import { describe, expect, test } from 'bun:test';
import calculator from '../../../plugins/tools/calculator';
import { evaluate, formatG } from '../../../plugins/tools/calculator/expression';

const call = (expression: string) => calculator.call({ expression }, { signal: new AbortController().signal });

describe('calculator tool', () => {
  const cases: Array<[string, string]> = [
    ['1 + 2 * 3', '7'],
    ['(1 + 2) * 3', '9'],
    ['2^10', '1024'],
    ['2**3**2', '512'],
    ['-2^2', '-4'],
    ['(-2)^2', '4'],
    ['7 / 2', '7/2'],
    ['1/3 + 1/6', '1/2'],
    ['6 / 3', '2'],
    ['7 // 2', '3'],
    ['-7 // 2', '-4'],
    ['-7 % 3', '2'],
    ['7 % -3', '-2'],
    ['2.5 * 4', '10'],
    ['0.1 + 0.2', '0.3'],
    ['10 / 4.0', '2.5'],
    ['1e3 + 1', '1001'],
    ['123456789 * 987654321', '121932631112635269'],
    ['1234567.0 * 3', '3.7037e+06'],
    ['1 / 3.0', '0.333333'],
    ['0.00001234', '1.234e-05'],
    ['sqrt(16)', '4'],
    ['sqrt(9/4)', '3/2'],
    ['sqrt(2)', '1.41421'],
    ['abs(-3/4)', '3/4'],
    ['floor(-7/2)', '-4'],
    ['ceil(7/2)', '4'],
    ['round(2.5)', '3'],
    ['round(-2.5)', '-3'],
    ['round(3.14159, 2)', '3.14'],
    ['min(3, 1/2, 2)', '1/2'],
    ['max(3, 4.5)', '4.5'],
    ['5!', '120'],
    ['factorial(20)', '2432902008176640000'],
    ['log(8, 2)', '3'],
    ['ln(e)', '1'],
    ['2 * pi', '6.28319'],
    ['2^-2', '1/4'],
    ['  3  ', '3'],
  ];
  for (const [expression, expected] of cases) {
    test(`${expression} = ${expected}`, () => expect(call(expression)).toBe(expected));
  }

  test('bad input becomes an error observation, never an exception', () => {
    expect(call('1 / 0')).toBe('Error: division by zero');
    expect(call('1 // 0')).toBe('Error: division by zero');
    expect(call('2 +')).toBe('Error: unexpected end of expression');
    expect(call('(1 + 2')).toBe("Error: expected ')'");
    expect(call('foo(1)')).toBe("Error: unknown function 'foo'");
    expect(call('x + 1')).toBe("Error: unknown name 'x'");
    expect(call('1 $ 2')).toBe("Error: unexpected '$'");
    expect(call('')).toBe('Error: empty expression');
    expect(call('sqrt(-1)')).toBe('Error: sqrt of a negative number');
    expect(call('(-8)^(1/3)')).toBe('Error: a negative number has no real root of that order');
    expect(call('process.exit(1)')).toBe("Error: unexpected '.'");
    expect(call('pi.constructor')).toBe("Error: unexpected '.'");
    expect(call('require("fs")')).toBe("Error: unexpected '\"'");
    expect(call('eval(1)')).toBe("Error: unknown function 'eval'");
  });

  test('hostile input is bounded', () => {
    expect(call('9^9^9')).toBe('Error: the result is too large');
    expect(call('2^4000')).toMatch(/^\d+$/);
    expect(call('2^100000')).toBe('Error: the result is too large');
    expect(call('1001!')).toBe('Error: factorial argument too large');
    expect(call(`${'('.repeat(300)}1${')'.repeat(300)}`)).toBe('Error: expression nested too deeply');
    expect(call('-'.repeat(500) + '1')).toBe('Error: expression nested too deeply');
    expect(call('1+'.repeat(600) + '1')).toBe('Error: the expression is longer than 1000 characters');
  });

  test('its parameters are a schema the policy can be shown', () => {
    expect(calculator.parameters.safeParse({ expression: '1' }).success).toBe(true);
    expect(calculator.parameters.safeParse({}).success).toBe(false);
  });

  test("formatG matches Python's '{:g}'", () => {
    const cases: Array<[number, string]> = [
      [0, '0'],
      [1, '1'],
      [0.5, '0.5'],
      [123456, '123456'],
      [1234567, '1.23457e+06'],
      [999999.5, '1e+06'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [-2.5e-7, '-2.5e-07'],
      [3.14159265, '3.14159'],
      [1e100, '1e+100'],
    ];
    for (const [x, text] of cases) expect(formatG(x)).toBe(text);
    expect(evaluate('100000 * 10.0')).toBe('1e+06');
  });
});
