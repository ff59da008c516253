/** Name and text pools, including the awkward values real data has. */
export const firstNames = [
  'Alice',
  'Bob',
  'Zoë',
  'José',
  'Łukasz',
  'Aoife',
  'Mei',
  '李',
  'Ngozi',
  'Søren',
  'Chloé',
  'Omar',
  'Priya',
  'Darius',
  'Anna-Lena',
  'Renée',
  'Kwame',
  'Yuki',
  'Ana María',
  'Ðorđe',
] as const;

export const lastNames = [
  "O'Brien",
  'Smith',
  'Müller',
  'García',
  'Nguyễn',
  '王',
  "D'Angelo",
  'Johansson',
  'Kowalski',
  'Okafor',
  'van der Berg',
  'Al-Sayed',
  'Tanaka',
  'Brontë',
  'Lee',
  'Dubois',
  'Núñez',
  'MacLeod',
  'Ivanova',
  'Patel',
] as const;

export const titleWords = [
  'Community',
  'Garden',
  'Youth',
  'Robotics',
  'Library',
  'Water',
  'Clean',
  'Energy',
  'Arts',
  'Music',
  'Health',
  'Clinic',
  'Literacy',
  'Coding',
  'Bridge',
  'Ocean',
  'Forest',
  'Solar',
  'Food',
  'Bank',
] as const;

/** Values that break naive SQL, CSV or JSON handling. Used for some titles, notes and answers. */
export const awkwardStrings = [
  "'; DROP TABLE applications; --",
  'Robert"); DELETE FROM awards; --',
  'He said "hello", then left',
  'It\'s the applicant\'s "best" idea',
  'Emoji 🚀🌱💧 project',
  'Ünïcödé façade — naïve café',
  '多语言项目：教育与科技',
  'مشروع المياه النظيفة',
  'Tab\tand\nnewline',
  'Backslash \\ and \\N and 100% _wildcards_',
  '',
] as const;

export const orgWords = ['Foundation', 'Trust', 'Collective', 'Society', 'Institute', 'Co-op', 'Alliance'] as const;
export const cities = [
  'Toronto',
  'Zürich',
  'São Paulo',
  'Kraków',
  'Montréal',
  'Reykjavík',
  'Austin',
  'Dublin',
] as const;
export const countries = ['Canada', 'Switzerland', 'Brazil', 'Poland', 'Iceland', 'USA', 'Ireland'] as const;

export function slug(s: string): string {
  const ascii = s
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
  return ascii || 'user';
}
